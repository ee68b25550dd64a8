//! TLS for the server: a certificate chain and its key from PEM, with rustls and its `ring`
//! provider only (one provider in the process: see DEPENDENCIES.md, trap 4).

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A certificate or key that cannot be used, saying which.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The certificate file holds no PEM certificate, or a broken one.
    #[error("the certificate: {0}")]
    Certificate(String),
    /// The key file holds no PEM private key, or a broken one.
    #[error("the private key: {0}")]
    Key(String),
    /// rustls refused the pair (a key that is not the certificate's, say).
    #[error("the certificate and key: {0}")]
    Pair(#[from] rustls::Error),
}

/// A rustls server configuration from a PEM certificate chain and private key, offering HTTP/2
/// and HTTP/1.1 (ALPN).
///
/// # Errors
///
/// [`TlsError`] naming the part that is wrong.
pub fn tls_config(
    certificate_pem: &[u8],
    key_pem: &[u8],
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let chain = CertificateDer::pem_slice_iter(certificate_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Certificate(e.to_string()))?;
    if chain.is_empty() {
        return Err(TlsError::Certificate("no PEM certificate in it".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| TlsError::Key(e.to_string()))?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
