//! Checks of the source-fetch options that `scan`, `attest`, `verify` and `watch` share, so each
//! command refuses a bad value with the same message, naming the flag and what it expects.
use std::path::PathBuf;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;

/// The longest `--timeout` accepted, in seconds.
pub const MAX_FETCH_TIMEOUT_SECS: f64 = 600.0;

/// A source-fetch option the caller must change: every variant is bad input, and names the flag.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionError {
    /// A base URL that is not http(s) with a host.
    #[error(
        "invalid {flag} {value:?}: expected an http:// or https:// URL, e.g. https://horizon.stellar.org"
    )]
    BaseUrl {
        /// The flag or key that set it.
        flag: String,
        /// The value given.
        value: String,
    },
    /// A `--timeout` out of range.
    #[error("invalid --timeout {0}: expected seconds between 0 and {MAX_FETCH_TIMEOUT_SECS}")]
    Timeout(f64),
    /// PEM text with a malformed block.
    #[error("{0}; expected PEM certificates")]
    Pem(String),
    /// PEM text with no certificate.
    #[error("no CERTIFICATE block found; expected PEM certificates")]
    NoCertificate,
    /// A `--cacert` file that cannot be read.
    #[error("cannot read --cacert {path}: {message}; expected a PEM file of CA certificates")]
    CacertUnreadable {
        /// The file, as shown.
        path: String,
        /// The I/O error.
        message: String,
    },
    /// A `--cacert` file whose content is not PEM certificates.
    #[error("invalid --cacert {path}: {defect}")]
    CacertInvalid {
        /// The file, as shown.
        path: String,
        /// What is wrong with its content.
        defect: Box<OptionError>,
    },
}

/// Refuses a base URL (`--horizon-url`, `--expert-url`, `--asset-list`) that is not http(s) with a host.
pub fn check_base_url(flag: &str, value: &str) -> Result<(), OptionError> {
    match url::Url::parse(value) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
        _ => Err(OptionError::BaseUrl {
            flag: flag.to_string(),
            value: value.to_string(),
        }),
    }
}

/// The `--timeout` for one fetch: finite, above zero and at most [`MAX_FETCH_TIMEOUT_SECS`].
pub fn fetch_timeout(seconds: f64) -> Result<Duration, OptionError> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_FETCH_TIMEOUT_SECS {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(OptionError::Timeout(seconds))
    }
}

/// The certificates of PEM text; an error when there is none or one is malformed.
pub fn pem_roots(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, OptionError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<_, _>>()
        .map_err(|e| OptionError::Pem(e.to_string()))?;
    if certs.is_empty() {
        return Err(OptionError::NoCertificate);
    }
    Ok(certs)
}

/// The extra trusted roots of every `--cacert` file, in order.
pub fn read_pem_roots(paths: &[PathBuf]) -> Result<Vec<CertificateDer<'static>>, OptionError> {
    let mut roots = Vec::new();
    for path in paths {
        let bytes = std::fs::read(path).map_err(|e| OptionError::CacertUnreadable {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        roots.extend(
            pem_roots(&bytes).map_err(|defect| OptionError::CacertInvalid {
                path: path.display().to_string(),
                defect: Box::new(defect),
            })?,
        );
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_need_http_or_https_and_a_host() {
        assert_eq!(check_base_url("--horizon-url", "https://h.example"), Ok(()));
        assert_eq!(
            check_base_url("--expert-url", "http://127.0.0.1:8000/api"),
            Ok(())
        );
        for bad in [
            "ftp://h.example",
            "h.example",
            "",
            "file:///etc/passwd",
            "https://",
        ] {
            let err = check_base_url("--horizon-url", bad)
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("invalid --horizon-url {bad:?}")),
                "{err}"
            );
        }
    }

    #[test]
    fn timeout_is_positive_finite_and_bounded() {
        assert_eq!(fetch_timeout(15.0), Ok(Duration::from_secs(15)));
        assert_eq!(fetch_timeout(0.25), Ok(Duration::from_millis(250)));
        assert_eq!(fetch_timeout(600.0), Ok(Duration::from_secs(600)));
        for bad in [0.0, -1.0, 600.5, f64::NAN, f64::INFINITY] {
            let err = fetch_timeout(bad).unwrap_err().to_string();
            assert!(err.starts_with("invalid --timeout"), "{err}");
        }
    }

    #[test]
    fn cacert_files_are_read_in_order_and_every_defect_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let ca = |name: &str| {
            let key = rcgen::KeyPair::generate().unwrap();
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, name);
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params.self_signed(&key).unwrap()
        };
        let (first, second) = (ca("first"), ca("second"));
        let both = dir.path().join("both.pem");
        std::fs::write(&both, format!("{}{}", first.pem(), second.pem())).unwrap();
        let roots = read_pem_roots(std::slice::from_ref(&both)).unwrap();
        assert_eq!(roots, vec![first.der().clone(), second.der().clone()]);

        let missing = dir.path().join("missing.pem");
        let err = read_pem_roots(&[both.clone(), missing.clone()])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("cannot read --cacert {}", missing.display())),
            "{err}"
        );

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = read_pem_roots(std::slice::from_ref(&empty))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "invalid --cacert {}: no CERTIFICATE block found; expected PEM certificates",
                empty.display()
            )
        );

        let broken = dir.path().join("broken.pem");
        std::fs::write(
            &broken,
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let err = read_pem_roots(std::slice::from_ref(&broken))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("invalid --cacert {}: ", broken.display())),
            "{err}"
        );
    }
}
