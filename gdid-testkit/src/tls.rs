//! Certificates made at test time: a certificate authority and the certificates it signs, for
//! servers and for clients (mutual TLS).

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, ExtendedKeyUsagePurpose, IsCa, KeyPair,
};

/// A certificate authority of its own.
#[derive(Debug)]
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl TestCa {
    /// A new authority, with a new key.
    pub fn new() -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let key = KeyPair::generate().expect("a key");
        TestCa {
            issuer: CertifiedIssuer::self_signed(params, key).expect("a CA certificate"),
        }
    }

    /// Its certificate, in PEM.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate for `name`: its PEM chain and PEM key.
    pub fn server(&self, name: &str) -> (String, String) {
        self.sign(name, ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A client certificate for `name`: its PEM chain and PEM key.
    pub fn client(&self, name: &str) -> (String, String) {
        self.sign(name, ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn sign(&self, name: &str, usage: ExtendedKeyUsagePurpose) -> (String, String) {
        let mut params = CertificateParams::new(vec![name.to_owned()]).expect("parameters");
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().expect("a key");
        let certificate = params.signed_by(&key, &self.issuer).expect("a certificate");
        (certificate.pem(), key.serialize_pem())
    }
}

impl Default for TestCa {
    fn default() -> Self {
        TestCa::new()
    }
}
