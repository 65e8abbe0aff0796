//! `--spool`: where snapshots are written — this process's memory (spilling to a local directory),
//! or an S3 bucket that every instance sharing the store reads.

use std::path::PathBuf;
use std::time::Duration;

use dual_core::ResourceId;
use dual_server::dual_spool::{DEFAULT_MEMORY_BUDGET, MemorySpool, S3SpoolBuilder, Spool, SpoolError};

use dual_store::redact_secrets;

/// The default of `--spool`: this process's memory.
pub const MEMORY: &str = "memory";
/// Retries of a failed S3 call before a request answers `503 storage_error`.
pub const S3_RETRIES: usize = 3;
/// Longest time the retries of one S3 call may take.
pub const S3_RETRY_TIMEOUT: Duration = Duration::from_secs(10);

/// The environment variables that name the S3 endpoint, the one `object_store` prefers first.
const ENDPOINT_VARS: [&str; 3] = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"];

/// How to set the spool up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoolOptions {
    /// `memory`, or `s3://BUCKET[/PREFIX]` (endpoint, region and credentials from the `AWS_*`
    /// environment).
    pub spec: String,
    /// Memory budget in MiB of the memory spool; `None` for the default (256). Memory spool only.
    pub memory_mb: Option<u64>,
    /// Spill directory of the memory spool; `None` for a private temporary one. Memory spool only.
    pub dir: Option<PathBuf>,
    /// Cap in MiB on the memory spool's bytes in memory and on disk together; `None` for the
    /// default sized to the machine (the budget plus half the free space above the floor). Memory
    /// spool only.
    pub max_mb: Option<u64>,
    /// Free space in MiB a spill must leave on the spill directory's disk; `None` for the default
    /// (1 GiB, or 5 % of the disk when smaller). Memory spool only.
    pub min_free_mb: Option<u64>,
}

impl SpoolOptions {
    /// `spec` with the memory spool's defaults.
    #[must_use]
    pub fn new(spec: impl Into<String>) -> Self {
        Self {
            spec: spec.into(),
            memory_mb: None,
            dir: None,
            max_mb: None,
            min_free_mb: None,
        }
    }
}

/// Why the spool could not be set up; messages never carry credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpoolSpecError {
    /// `--spool` is neither `memory` nor an `s3://` URL.
    #[error("--spool `{0}`: use `memory` or `s3://BUCKET[/PREFIX]`")]
    Unknown(String),
    /// The `s3://` URL or the `AWS_*` environment was refused.
    #[error("--spool `{url}`: {source}")]
    S3 {
        /// The URL, redacted.
        url: String,
        /// The spool's error.
        #[source]
        source: SpoolError,
    },
    /// The S3 spool did not answer at start-up.
    #[error("--spool `{url}`: cannot reach S3 at {endpoint}: {source}")]
    Unreachable {
        /// The URL, redacted.
        url: String,
        /// The endpoint, redacted.
        endpoint: String,
        /// The spool's error.
        #[source]
        source: SpoolError,
    },
    /// A flag of the memory spool was given with an S3 spool.
    #[error("{flag} applies to `--spool memory` only")]
    MemoryOnly {
        /// The flag.
        flag: &'static str,
    },
    /// The memory spool's spill directory could not be set up.
    #[error("snapshot spool: {0}")]
    Memory(#[source] SpoolError),
}

/// Which spool `--spool` names, checked but not yet opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpoolSpec {
    /// This process's memory, spilling to `dir`.
    Memory {
        /// The budget in MiB.
        memory_mb: u64,
        /// The spill directory; `None` for a private temporary one.
        dir: Option<PathBuf>,
        /// The cap on bytes in memory and on disk, in MiB; `None` for the default.
        max_mb: Option<u64>,
        /// The free-space floor in MiB; `None` for the default.
        min_free_mb: Option<u64>,
    },
    /// `s3://BUCKET[/PREFIX]`, shared by every instance that names it.
    S3 {
        /// The URL as given (trimmed).
        url: String,
    },
}

impl SpoolSpec {
    /// Checks `options`: a known spool, a well-formed `s3://` URL, no memory-spool flag with S3.
    ///
    /// # Errors
    /// [`SpoolSpecError`] naming the flag at fault.
    pub fn parse(options: &SpoolOptions) -> Result<Self, SpoolSpecError> {
        let spec = options.spec.trim();
        if spec.eq_ignore_ascii_case(MEMORY) {
            return Ok(Self::Memory {
                memory_mb: options.memory_mb.unwrap_or(DEFAULT_MEMORY_BUDGET >> 20),
                dir: options.dir.clone(),
                max_mb: options.max_mb,
                min_free_mb: options.min_free_mb,
            });
        }
        let Some((_, location)) = spec
            .split_once("://")
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("s3"))
        else {
            return Err(SpoolSpecError::Unknown(redact_secrets(spec)));
        };
        if options.memory_mb.is_some() {
            return Err(SpoolSpecError::MemoryOnly {
                flag: "--spool-memory-mb",
            });
        }
        if options.dir.is_some() {
            return Err(SpoolSpecError::MemoryOnly { flag: "--spool-dir" });
        }
        if options.max_mb.is_some() {
            return Err(SpoolSpecError::MemoryOnly {
                flag: "--spool-max-mb",
            });
        }
        if options.min_free_mb.is_some() {
            return Err(SpoolSpecError::MemoryOnly {
                flag: "--spool-min-free-mb",
            });
        }
        // The scheme in lower case, as S3SpoolBuilder expects it.
        let url = format!("s3://{location}");
        S3SpoolBuilder::from_url(&url).map_err(|source| SpoolSpecError::S3 {
            url: redact_secrets(&url),
            source,
        })?;
        Ok(Self::S3 { url })
    }

    /// Whether other instances can read this spool's snapshots.
    #[must_use]
    pub fn is_shared(&self) -> bool {
        matches!(self, Self::S3 { .. })
    }

    /// Sets the spool up: the memory spool's spill directory, or the S3 client, which is reached
    /// once here so that a wrong endpoint fails at start-up rather than on the first tool call.
    /// Logs where the spool is (never credentials).
    ///
    /// # Errors
    /// [`SpoolSpecError`] for an unusable directory, a refused configuration or an unreachable S3.
    pub async fn open(&self) -> Result<Spool, SpoolSpecError> {
        match self {
            Self::Memory {
                memory_mb,
                dir,
                max_mb,
                min_free_mb,
            } => {
                let mut builder = MemorySpool::builder().memory_budget_mb(*memory_mb);
                if let Some(dir) = dir {
                    builder = builder.dir(dir);
                }
                if let Some(max_mb) = max_mb {
                    builder = builder.max_mb(*max_mb);
                }
                if let Some(min_free_mb) = min_free_mb {
                    builder = builder.min_free_mb(*min_free_mb);
                }
                let spool = builder.build().await.map_err(SpoolSpecError::Memory)?;
                tracing::info!(
                    memory_mb,
                    dir = %spool.dir().display(),
                    max_mb = spool.max_bytes().map(|bytes| bytes >> 20),
                    min_free_mb = spool.min_free_bytes() >> 20,
                    "snapshot spool ready (memory)"
                );
                Ok(Spool::new(spool))
            }
            Self::S3 { url } => open_s3(url).await,
        }
    }
}

async fn open_s3(url: &str) -> Result<Spool, SpoolSpecError> {
    let redacted = redact_secrets(url);
    let endpoint = endpoint();
    let backend = S3SpoolBuilder::from_url(url)
        .map(|builder| builder.retries(S3_RETRIES, S3_RETRY_TIMEOUT))
        .and_then(S3SpoolBuilder::build)
        .map_err(|source| SpoolSpecError::S3 {
            url: redacted.clone(),
            source,
        })?;
    let spool = Spool::new(backend);
    // A manifest no instance wrote: `NotFound` means S3 answered.
    match spool.manifest(ResourceId::new()).await {
        Ok(_) => {}
        Err(error) if error.is_not_found() => {}
        Err(source) => {
            return Err(SpoolSpecError::Unreachable {
                url: redacted,
                endpoint,
                source,
            });
        }
    }
    tracing::info!(spool = %redacted, %endpoint, "snapshot spool ready (S3, shared)");
    Ok(spool)
}

/// The endpoint the `AWS_*` environment names, redacted, for logs and errors.
fn endpoint() -> String {
    ENDPOINT_VARS
        .iter()
        .find_map(|name| std::env::var(name).ok())
        .map_or_else(
            || "AWS (the region's endpoint)".to_owned(),
            |url| redact_secrets(&url),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(spec: &str) -> Result<SpoolSpec, SpoolSpecError> {
        SpoolSpec::parse(&SpoolOptions::new(spec))
    }

    #[test]
    fn memory_and_s3_urls_are_spools() {
        assert_eq!(
            parse(" memory ").expect("memory"),
            SpoolSpec::Memory {
                memory_mb: 256,
                dir: None,
                max_mb: None,
                min_free_mb: None,
            }
        );
        let spec = parse("S3://bucket/some/prefix/").expect("s3");
        assert_eq!(
            spec,
            SpoolSpec::S3 {
                url: "s3://bucket/some/prefix/".to_owned()
            }
        );
        assert!(spec.is_shared());
        assert!(!parse("memory").expect("memory").is_shared());
    }

    #[test]
    fn bad_specs_name_the_flag_without_secrets() {
        for bad in [
            "",
            "disk",
            "s3://",
            "s3:///prefix",
            "gs://bucket",
            "https://k:topsecret@h/b",
        ] {
            let error = parse(bad).expect_err(bad).to_string();
            assert!(error.starts_with("--spool `"), "{bad}: {error}");
            assert!(!error.contains("topsecret"), "{bad}: {error}");
        }
    }

    #[test]
    fn memory_spool_flags_are_refused_with_s3() {
        /// Sets one memory-only flag.
        type Set = fn(&mut SpoolOptions);
        let flags: [(&str, Set); 4] = [
            ("--spool-dir", |o| o.dir = Some(PathBuf::from("/tmp/spool"))),
            ("--spool-memory-mb", |o| o.memory_mb = Some(64)),
            ("--spool-max-mb", |o| o.max_mb = Some(1)),
            ("--spool-min-free-mb", |o| o.min_free_mb = Some(1)),
        ];
        for (flag, set) in flags {
            let mut options = SpoolOptions::new("s3://bucket");
            set(&mut options);
            let error = SpoolSpec::parse(&options).expect_err(flag).to_string();
            assert_eq!(error, format!("{flag} applies to `--spool memory` only"));
        }
        let mut options = SpoolOptions::new("s3://bucket");
        options.memory_mb = Some(64);
        options.spec = "memory".to_owned();
        assert_eq!(
            SpoolSpec::parse(&options).expect("memory"),
            SpoolSpec::Memory {
                memory_mb: 64,
                dir: None,
                max_mb: None,
                min_free_mb: None,
            }
        );
    }
}
