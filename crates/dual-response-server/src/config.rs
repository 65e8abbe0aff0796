//! Where `serve`'s options come from: a flag, else the environment variable `DUAL_<NAME>` (the flag's
//! name in capitals, `-` as `_`: `DUAL_MAX_CONNECTIONS`), else the key of the TOML file given with
//! `--config FILE` (or `DUAL_CONFIG`; keys named like the flags: `database = "…"`,
//! `max-connections = 64`, `_` accepted for `-`), else the default.
//!
//! [`resolve`] appends what the environment and the file give to the command line, for options the
//! command line does not set, so that clap parses (and checks) every value the same way wherever it
//! came from. An unknown key of the file is refused, naming it and the keys accepted.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};

/// The subcommand whose options this resolves.
pub const SUBCOMMAND: &str = "serve";
/// The prefix of the environment variables.
pub const ENV_PREFIX: &str = "DUAL_";
/// The largest configuration file read, in bytes.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Options that are not configuration: never read from the environment or a file.
const NOT_CONFIG: &[&str] = &["help", "version", "config", "print_config"];
/// Options whose values may hold a password (database and store URLs): redacted when printed.
const SECRET_URLS: &[&str] = &["database", "store"];

/// Where an option's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A flag on the command line.
    Flag,
    /// The environment variable `DUAL_<NAME>`.
    Environment,
    /// The configuration file.
    File,
    /// The built-in default (or unset).
    Default,
}

impl Source {
    fn label(self) -> &'static str {
        match self {
            Self::Flag => "flag",
            Self::Environment => "environment",
            Self::File => "config file",
            Self::Default => "default",
        }
    }
}

/// The command line with the environment's and the file's values appended, and where each option
/// came from.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The arguments to parse.
    pub argv: Vec<OsString>,
    /// The source of each option set by the environment or the file, by clap id.
    pub sources: BTreeMap<String, Source>,
}

/// Why the configuration could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The command line itself is wrong (clap's message, printed by clap).
    #[error(transparent)]
    Clap(#[from] clap::Error),
    /// The file could not be read.
    #[error("cannot read the configuration file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_CONFIG_BYTES`].
    #[error("the configuration file {path} is larger than {MAX_CONFIG_BYTES} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The file is not TOML.
    #[error("the configuration file {path} is not valid TOML: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A key of the file names no option.
    #[error(
        "unknown key `{key}` in the configuration file {path}; the keys are the options of `serve`: {accepted}"
    )]
    UnknownKey {
        /// The key.
        key: String,
        /// The file.
        path: PathBuf,
        /// The keys accepted, comma-separated.
        accepted: String,
    },
    /// A value is of a type no option takes (a table, an array, a date).
    #[error("`{key}` in {origin}: {reason}")]
    Value {
        /// The key or variable.
        key: String,
        /// Where it was found.
        origin: String,
        /// What is wrong.
        reason: String,
    },
}

/// Resolves `argv` (the whole command line, program name first) against `command`: for `serve`,
/// appends the options set in the environment (`env` looks a variable up) or the configuration file
/// and not on the command line; other subcommands are returned unchanged.
///
/// # Errors
/// [`ConfigError`] for a wrong command line, an unreadable or invalid file, an unknown key or a
/// value no option takes.
pub fn resolve(
    command: &Command,
    argv: Vec<OsString>,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Resolved, ConfigError> {
    let matches = command.clone().try_get_matches_from(&argv)?;
    let unchanged = |argv| Resolved {
        argv,
        sources: BTreeMap::new(),
    };
    let (Some(serve), Some(sub)) = (
        command.find_subcommand(SUBCOMMAND),
        matches.subcommand_matches(SUBCOMMAND),
    ) else {
        return Ok(unchanged(argv));
    };
    let file_path = sub
        .get_one::<PathBuf>("config")
        .cloned()
        .or_else(|| env(&env_name("config")).map(PathBuf::from));
    let file = match &file_path {
        Some(path) => read_file(path, serve)?,
        None => BTreeMap::new(),
    };
    let mut argv = argv;
    let mut sources = BTreeMap::new();
    for arg in serve.get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        if NOT_CONFIG.contains(&id) || sub.value_source(id) == Some(ValueSource::CommandLine) {
            continue;
        }
        // A flag that conflicts with this option (`--db` for `--database`) was given: it wins.
        let given =
            |other: &clap::Arg| sub.value_source(other.get_id().as_str()) == Some(ValueSource::CommandLine);
        if serve.get_arg_conflicts_with(arg).into_iter().any(given) {
            continue;
        }
        let name = env_name(id);
        let (value, source, origin) = if let Some(value) = env(&name) {
            let value = value.into_string().map_err(|_| ConfigError::Value {
                key: name.clone(),
                origin: "the environment".to_owned(),
                reason: "not valid UTF-8".to_owned(),
            })?;
            (value, Source::Environment, "the environment".to_owned())
        } else if let Some(value) = file.get(id) {
            let origin = file_path
                .as_deref()
                .map_or_else(String::new, |path| path.display().to_string());
            (value.clone(), Source::File, origin)
        } else {
            continue;
        };
        if arg.get_action().takes_values() {
            argv.push(format!("--{long}").into());
            argv.push(value.into());
        } else {
            match value.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => argv.push(format!("--{long}").into()),
                "false" | "0" | "no" | "" => {}
                _ => {
                    return Err(ConfigError::Value {
                        key: if source == Source::Environment {
                            name
                        } else {
                            long.to_owned()
                        },
                        origin,
                        reason: format!("`{value}` is not a boolean (true or false)"),
                    });
                }
            }
        }
        sources.insert(id.to_owned(), source);
    }
    Ok(Resolved { argv, sources })
}

/// The environment variable of the option with clap id `id`.
#[must_use]
pub fn env_name(id: &str) -> String {
    format!("{ENV_PREFIX}{}", id.replace('-', "_").to_ascii_uppercase())
}

/// The keys and values of the file at `path`, by clap id.
fn read_file(path: &Path, serve: &Command) -> Result<BTreeMap<String, String>, ConfigError> {
    let read_error = |source| ConfigError::Read {
        path: path.to_owned(),
        source,
    };
    let len = std::fs::metadata(path).map_err(read_error)?.len();
    if len > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_owned(),
        });
    }
    let text = std::fs::read_to_string(path).map_err(read_error)?;
    let table: toml::Table = toml::from_str(&text).map_err(|error| ConfigError::Parse {
        path: path.to_owned(),
        message: error.message().to_owned(),
    })?;
    let keys: Vec<(&str, &str)> = serve
        .get_arguments()
        .filter(|arg| !NOT_CONFIG.contains(&arg.get_id().as_str()))
        .filter_map(|arg| Some((arg.get_id().as_str(), arg.get_long()?)))
        .collect();
    let mut values = BTreeMap::new();
    for (key, value) in table {
        let id = key.replace('-', "_");
        let Some((id, _)) = keys.iter().find(|(known, _)| *known == id) else {
            let accepted: Vec<&str> = keys.iter().map(|(_, long)| *long).collect();
            return Err(ConfigError::UnknownKey {
                key,
                path: path.to_owned(),
                accepted: accepted.join(", "),
            });
        };
        let text = match value {
            toml::Value::String(text) => text,
            toml::Value::Integer(number) => number.to_string(),
            toml::Value::Float(number) => number.to_string(),
            toml::Value::Boolean(flag) => flag.to_string(),
            other => {
                return Err(ConfigError::Value {
                    key,
                    origin: path.display().to_string(),
                    reason: format!(
                        "a {} is not an option's value (a string, number or boolean)",
                        other.type_str()
                    ),
                });
            }
        };
        values.insert((*id).to_owned(), text);
    }
    Ok(values)
}

/// The effective configuration of `serve` as TOML a `--config` file accepts: every option with its
/// value and, in a comment, where it came from; passwords in URLs are `***`; unset options are
/// commented out.
#[must_use]
pub fn render(serve: &Command, matches: &ArgMatches, sources: &BTreeMap<String, Source>) -> String {
    let mut out = String::from("# the effective configuration of `dual-response serve`\n");
    for arg in serve.get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        if NOT_CONFIG.contains(&id) {
            continue;
        }
        let source = match matches.value_source(id) {
            Some(ValueSource::CommandLine) => sources.get(id).copied().unwrap_or(Source::Flag),
            _ => Source::Default,
        };
        let raw: Option<Vec<String>> = matches
            .get_raw(id)
            .map(|values| values.map(|v| v.to_string_lossy().into_owned()).collect());
        let value = match raw.as_deref() {
            Some([one]) => Some(one.clone()),
            Some([]) | None => None,
            Some(many) => Some(many.join(",")),
        };
        let is_flag = !arg.get_action().takes_values();
        let line = match value {
            _ if is_flag => {
                let on = matches.get_flag(id);
                format!("{long} = {on}")
            }
            Some(value) => {
                let value = if SECRET_URLS.contains(&id) {
                    dual_store::redact_secrets(&value)
                } else {
                    value
                };
                format!("{long} = {}", toml_value(&value))
            }
            None => format!("# {long} = (unset)"),
        };
        out.push_str(&format!("{line:<60} # {}\n", source.label()));
    }
    out
}

/// `value` as a TOML value: a number or a boolean bare, anything else a quoted string.
fn toml_value(value: &str) -> String {
    if value.parse::<i64>().is_ok() || value == "true" || value == "false" {
        value.to_owned()
    } else {
        toml::Value::String(value.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction};

    fn command() -> Command {
        Command::new("dual-response").subcommand(
            Command::new(SUBCOMMAND)
                .arg(
                    Arg::new("config")
                        .long("config")
                        .value_parser(clap::value_parser!(PathBuf)),
                )
                .arg(
                    Arg::new("print_config")
                        .long("print-config")
                        .action(ArgAction::SetTrue),
                )
                .arg(Arg::new("addr").long("addr").default_value("127.0.0.1:8080"))
                .arg(
                    Arg::new("max_connections")
                        .long("max-connections")
                        .default_value("1024"),
                )
                .arg(Arg::new("database").long("database").conflicts_with("db"))
                .arg(Arg::new("db").long("db"))
                .arg(Arg::new("stdio").long("stdio").action(ArgAction::SetTrue)),
        )
    }

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn file(text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("dual-config-{:016x}.toml", fastrand::u64(..)));
        std::fs::write(&path, text).expect("a temporary file");
        path
    }

    fn effective(resolved: &Resolved, id: &str) -> Option<String> {
        let matches = command().try_get_matches_from(&resolved.argv).expect("parses");
        let sub = matches.subcommand_matches(SUBCOMMAND).expect("serve");
        if id == "stdio" {
            return Some(sub.get_flag(id).to_string());
        }
        sub.get_one::<String>(id).cloned()
    }

    #[test]
    fn a_flag_wins_over_the_environment_which_wins_over_the_file() {
        let path = file("addr = \"10.0.0.1:1\"\nmax-connections = 7\ndatabase = \"demo\"\nstdio = true\n");
        let config = path.display().to_string();
        let env = |name: &str| (name == "DUAL_MAX_CONNECTIONS").then(|| OsString::from("9"));
        let resolved = resolve(
            &command(),
            argv(&[
                "dual-response",
                "serve",
                "--config",
                &config,
                "--addr",
                "127.0.0.1:9",
            ]),
            env,
        )
        .expect("resolves");
        assert_eq!(effective(&resolved, "addr").as_deref(), Some("127.0.0.1:9"));
        assert_eq!(effective(&resolved, "max_connections").as_deref(), Some("9"));
        assert_eq!(effective(&resolved, "database").as_deref(), Some("demo"));
        assert_eq!(effective(&resolved, "stdio").as_deref(), Some("true"));
        assert_eq!(
            resolved.sources.get("max_connections"),
            Some(&Source::Environment)
        );
        assert_eq!(resolved.sources.get("database"), Some(&Source::File));
        assert_eq!(resolved.sources.get("addr"), None, "the flag's own");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn the_config_file_may_come_from_the_environment_and_defaults_stay() {
        let path = file("database = 'sqlite:x.db'\n");
        let config = OsString::from(&path);
        let env = move |name: &str| (name == "DUAL_CONFIG").then(|| config.clone());
        let resolved = resolve(&command(), argv(&["dual-response", "serve"]), env).expect("resolves");
        assert_eq!(effective(&resolved, "database").as_deref(), Some("sqlite:x.db"));
        assert_eq!(effective(&resolved, "max_connections").as_deref(), Some("1024"));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn an_unknown_key_is_refused_naming_it_and_the_keys() {
        let path = file("addr = \"127.0.0.1:1\"\nmax-conections = 5\n");
        let config = path.display().to_string();
        let error = resolve(
            &command(),
            argv(&["dual-response", "serve", "--config", &config]),
            |_| None,
        )
        .expect_err("refused");
        let message = error.to_string();
        assert!(message.contains("unknown key `max-conections`"), "{message}");
        assert!(message.contains("max-connections"), "{message}");
        assert!(!message.contains("print-config"), "not a key: {message}");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn values_no_option_takes_are_refused() {
        for (text, expected) in [
            ("addr = [1, 2]", "array"),
            ("stdio = \"maybe\"", "not a boolean"),
            ("addr = ", "not valid TOML"),
        ] {
            let path = file(text);
            let config = path.display().to_string();
            let error = resolve(
                &command(),
                argv(&["dual-response", "serve", "--config", &config]),
                |_| None,
            )
            .expect_err(text);
            assert!(error.to_string().contains(expected), "{text}: {error}");
            let _ = std::fs::remove_file(path);
        }
        let missing = resolve(
            &command(),
            argv(&["dual-response", "serve", "--config", "/nonexistent/dual.toml"]),
            |_| None,
        )
        .expect_err("no file");
        assert!(
            missing.to_string().contains("/nonexistent/dual.toml"),
            "{missing}"
        );
    }

    #[test]
    fn a_conflicting_flag_wins_over_the_environment() {
        let env = |name: &str| (name == "DUAL_DATABASE").then(|| OsString::from("postgres://x@h/db"));
        let resolved =
            resolve(&command(), argv(&["dual-response", "serve", "--db", "x.db"]), env).expect("resolves");
        assert_eq!(
            effective(&resolved, "database"),
            None,
            "--db given: DUAL_DATABASE is not used"
        );
        assert_eq!(effective(&resolved, "db").as_deref(), Some("x.db"));
    }

    #[test]
    fn other_subcommands_are_left_alone() {
        let env = |_: &str| Some(OsString::from("9"));
        let resolved = resolve(&command(), argv(&["dual-response"]), env).expect("resolves");
        assert_eq!(resolved.argv, argv(&["dual-response"]));
    }

    #[test]
    fn the_printed_configuration_redacts_passwords_and_names_sources() {
        let resolved = resolve(
            &command(),
            argv(&[
                "dual-response",
                "serve",
                "--database",
                "postgres://reader:hunter2@db/sales",
            ]),
            |name| (name == "DUAL_ADDR").then(|| OsString::from("0.0.0.0:80")),
        )
        .expect("resolves");
        let command = command();
        let matches = command
            .clone()
            .try_get_matches_from(&resolved.argv)
            .expect("parses");
        let sub = matches.subcommand_matches(SUBCOMMAND).expect("serve");
        let serve = command.find_subcommand(SUBCOMMAND).expect("serve");
        let text = render(serve, sub, &resolved.sources);
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("postgres://reader:***@db/sales"), "{text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("addr = \"0.0.0.0:80\"") && l.ends_with("# environment")),
            "{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.starts_with("max-connections = 1024") && l.ends_with("# default")),
            "{text}"
        );
        assert!(text.lines().any(|l| l.starts_with("stdio = false")), "{text}");
        // What is printed is a file `--config` accepts.
        let table: toml::Table = toml::from_str(&text).expect("TOML");
        assert_eq!(table["max-connections"].as_integer(), Some(1024));
    }
}
