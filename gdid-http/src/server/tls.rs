//! TLS for the server: a certificate chain and its key from PEM, with rustls and its `ring`
//! provider only (with two providers linked, rustls cannot pick a default and panics at run
//! time).

use std::sync::Arc;

use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;

use crate::pem::certificates;

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
    /// The client CA file holds no PEM certificate, or one that cannot sign.
    #[error("the client CA: {0}")]
    ClientCa(String),
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
    config(certificate_pem, key_pem, None)
}

/// As [`tls_config`], and asking every client for a certificate signed by one of the PEM
/// certificates of `client_ca_pem` (mutual TLS): a client without one is refused in the
/// handshake, before a byte of HTTP is read. The bearer token is still required.
///
/// # Errors
///
/// [`TlsError`] naming the part that is wrong.
pub fn mutual_tls_config(
    certificate_pem: &[u8],
    key_pem: &[u8],
    client_ca_pem: &[u8],
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    config(certificate_pem, key_pem, Some(client_ca_pem))
}

fn config(
    certificate_pem: &[u8],
    key_pem: &[u8],
    client_ca_pem: Option<&[u8]>,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let chain = certificates(certificate_pem).map_err(TlsError::Certificate)?;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| TlsError::Key(e.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?;
    let builder = match client_ca_pem {
        None => versions.with_no_client_auth(),
        Some(pem) => {
            let mut roots = rustls::RootCertStore::empty();
            for certificate in certificates(pem).map_err(TlsError::ClientCa)? {
                roots
                    .add(certificate)
                    .map_err(|e| TlsError::ClientCa(e.to_string()))?;
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .map_err(|e| TlsError::ClientCa(e.to_string()))?;
            versions.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
