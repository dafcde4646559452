//! The values settings take: the refusal ([`ConfigError`]), the value
//! trait ([`SettingValue`]) with its one syntax per type (sizes, counts,
//! booleans, durations, directories), and the check of a least value.
//! Types that belong to a configured module (a steal protocol, a victim
//! policy) implement [`SettingValue`] beside the table that uses them.

use std::fmt;

pub use crate::fatal::fmt_size;

/// The syntax of every size setting.
pub const SIZE_SYNTAX: &str = "a size: 65536, 512K, 64M, 1G";
/// The syntax of every count setting.
pub const COUNT_SYNTAX: &str = "a whole number";

/// A bad value in an environment variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses "64M", "1G", "4096", "512K".
pub(crate) fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let (digits, shift) = match t.as_bytes().last()? {
        b'K' | b'k' => (&t[..t.len() - 1], 10),
        b'M' | b'm' => (&t[..t.len() - 1], 20),
        b'G' | b'g' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    digits.parse::<usize>().ok()?.checked_mul(1usize << shift)
}

/// A setting's value type: how the environment's text becomes one (the
/// variable is named in every refusal), how it prints at start-up and in
/// the README's table, and (tests) a word that tells values apart.
pub trait SettingValue: Sized {
    /// Parses `text`, the value of the variable `var`.
    fn parse(var: &str, text: &str) -> Result<Self, ConfigError>;
    /// As a person would write it back into the variable.
    fn show(&self) -> String;
    /// A word equal for equal values (the tests tell settings apart by it).
    fn word(&self) -> u64;
}

/// The one boolean syntax of every on/off setting.
pub const BOOL_SYNTAX: &str = "on|off|1|0|true|false";

/// Parses a boolean setting: `on`, `1`, `true` or `off`, `0`, `false`;
/// anything else is refused naming the variable.
pub(crate) fn parse_bool(var: &str, text: &str) -> Result<bool, ConfigError> {
    match text {
        "on" | "1" | "true" => Ok(true),
        "off" | "0" | "false" => Ok(false),
        _ => Err(ConfigError(format!(
            "{var}={text}: expected {}",
            BOOL_SYNTAX.replace('|', ", ")
        ))),
    }
}

impl SettingValue for bool {
    fn parse(var: &str, text: &str) -> Result<bool, ConfigError> {
        parse_bool(var, text)
    }
    fn show(&self) -> String {
        if *self { "on" } else { "off" }.into()
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl SettingValue for usize {
    fn parse(var: &str, text: &str) -> Result<usize, ConfigError> {
        parse_size(text).ok_or_else(|| ConfigError(format!("{var}={text}: expected a size such as 64M, 1G or 65536")))
    }
    fn show(&self) -> String {
        fmt_size(*self)
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl SettingValue for u32 {
    fn parse(var: &str, text: &str) -> Result<u32, ConfigError> {
        text.trim()
            .parse()
            .map_err(|_| ConfigError(format!("{var}={text}: expected a whole number (0 to {})", u32::MAX)))
    }
    fn show(&self) -> String {
        self.to_string()
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl SettingValue for u64 {
    fn parse(var: &str, text: &str) -> Result<u64, ConfigError> {
        text.trim()
            .parse()
            .map_err(|_| ConfigError(format!("{var}={text}: expected a whole number (0 to {})", u64::MAX)))
    }
    fn show(&self) -> String {
        self.to_string()
    }
    fn word(&self) -> u64 {
        *self
    }
}

/// A setting whose default is decided at start-up (None): set, it holds a
/// value; unset, it shows as `auto`.
impl<T: SettingValue> SettingValue for Option<T> {
    fn parse(var: &str, text: &str) -> Result<Option<T>, ConfigError> {
        T::parse(var, text).map(Some)
    }
    fn show(&self) -> String {
        self.as_ref().map_or_else(|| "auto".into(), T::show)
    }
    fn word(&self) -> u64 {
        self.as_ref().map_or(u64::MAX, |v| v.word())
    }
}

/// At least `min` (a size or count): the check of a setting with a least
/// value.
pub fn at_least<T: PartialOrd + Copy + SettingValue>(value: &T, min: T) -> Result<(), String> {
    if *value < min {
        Err(format!("must be at least {}", min.show()))
    } else {
        Ok(())
    }
}

/// Parses a duration: a whole number followed by `ns`, `us` (or `µs`),
/// `ms` or `s`; `0` alone is zero.
pub(crate) fn parse_duration(text: &str) -> Option<std::time::Duration> {
    let t = text.trim();
    if t == "0" {
        return Some(std::time::Duration::ZERO);
    }
    let split = t.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let ns_per = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return None,
    };
    Some(std::time::Duration::from_nanos(n.checked_mul(ns_per)?))
}

impl SettingValue for std::time::Duration {
    fn parse(var: &str, text: &str) -> Result<std::time::Duration, ConfigError> {
        parse_duration(text).ok_or_else(|| {
            ConfigError(format!(
                "{var}={text}: expected a duration such as 2us, 500ns, 1ms or 0"
            ))
        })
    }
    fn show(&self) -> String {
        let ns = self.as_nanos();
        match ns {
            0 => "0".into(),
            _ if ns.is_multiple_of(1_000_000) => format!("{}ms", ns / 1_000_000),
            _ if ns.is_multiple_of(1_000) => format!("{}us", ns / 1_000),
            _ => format!("{ns}ns"),
        }
    }
    fn word(&self) -> u64 {
        self.as_nanos() as u64
    }
}

/// A directory (`UAT_TRACE`).
impl SettingValue for std::path::PathBuf {
    fn parse(var: &str, text: &str) -> Result<std::path::PathBuf, ConfigError> {
        if text.is_empty() {
            return Err(ConfigError(format!(
                "{var}={text}: empty; name a directory (or unset the variable)"
            )));
        }
        Ok(text.into())
    }
    fn show(&self) -> String {
        self.display().to_string()
    }
    fn word(&self) -> u64 {
        self.as_os_str()
            .as_encoded_bytes()
            .iter()
            .fold(1u64, |h, &b| h.wrapping_mul(1_000_003).wrapping_add(b as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999999999999G"), None);
    }

    #[test]
    fn sizes_print_as_they_are_written() {
        assert_eq!(fmt_size(256 << 10), "256K");
        assert_eq!(fmt_size(64 << 20), "64M");
        assert_eq!(fmt_size(3 << 30), "3G");
        assert_eq!(fmt_size(1000), "1000");
        assert_eq!(parse_size(&fmt_size(1536 << 10)), Some(1536 << 10));
    }

    #[test]
    fn booleans_have_one_syntax_and_refusals_name_the_variable() {
        for (t, v) in [
            ("on", true),
            ("1", true),
            ("true", true),
            ("off", false),
            ("0", false),
            ("false", false),
        ] {
            assert_eq!(parse_bool("UAT_X", t), Ok(v));
        }
        for t in ["", "yes", "no", "ON", "2", " on"] {
            let e = parse_bool("UAT_X", t).unwrap_err();
            assert!(e.0.starts_with(&format!("UAT_X={t}:")), "{e}");
        }
    }
}
