//! PEM certificates, as the client and the server read them.

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// The PEM certificates of `pem`, at least one.
pub(crate) fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if chain.is_empty() {
        return Err("no PEM certificate in it".into());
    }
    Ok(chain)
}
