//! The form every settings table is declared in: the scheduler's
//! ([`crate::Config`]) and a layer's own (global memory's,
//! `uat_memory::Config`).
//!
//! One [`settings!`](crate::settings!) invocation is the only place its
//! settings are written. From each row come the struct's field and its
//! default, the environment variable's parser (one syntax per value type,
//! [`SettingValue`]), the builder method and the getter, the settings
//! table of the README and the design docs (`settings_markdown`, checked
//! by a test of the crate that declares it), the start-up description
//! (`UAT_VERBOSE=on`) and, for the settings every rank must share, the
//! start-up agreement check (`Runtime::start`: a mismatch ends the job
//! naming the variable and both values).

mod value;

pub use value::{at_least, fmt_size, ConfigError, SettingValue, BOOL_SYNTAX, COUNT_SYNTAX, SIZE_SYNTAX};

/// One row of a settings table.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// The environment variable.
    pub env: &'static str,
    /// The struct's field (and builder method).
    pub field: &'static str,
    /// What it sets.
    pub what: &'static str,
    /// The values it takes.
    pub values: &'static str,
    /// Its default, as the README says it.
    pub default: &'static str,
    /// Whether every rank must have the same value (checked at start-up).
    pub agree: bool,
    /// A valid value other than the default (the tests set each).
    pub example: &'static str,
}

/// What the runtime asks of a settings table at start (implemented by
/// every [`settings!`](crate::settings!) struct).
pub trait Settings: std::fmt::Debug + Send + Sync + 'static {
    /// Every setting's own check and the rules between them, on values
    /// however they were set (the builder methods take any): the start
    /// refuses a configuration that fails one, naming the variable and the
    /// value.
    fn validate(&self) -> Result<(), ConfigError>;

    /// Every setting as `UAT_X=value` (the start-up description).
    fn describe_settings(&self) -> String;

    /// The settings every rank must share: variable, value as set.
    fn agreement(&self) -> Vec<(&'static str, String)>;
}

/// The Markdown table of `settings` (the README's and the design docs').
pub fn markdown(settings: &[Setting]) -> String {
    let mut t = String::from("| setting | env var | values | default | same on every rank |\n|---|---|---|---|---|\n");
    for s in settings {
        let cell = |x: &str| x.replace('|', "\\|");
        t.push_str(&format!(
            "| {} | `{}` | {} | {} | {} |\n",
            s.what,
            s.env,
            cell(s.values),
            cell(s.default),
            if s.agree { "yes" } else { "" }
        ));
    }
    t
}

/// Declares a settings table: a struct of settings (see the module docs
/// for what each row yields), and the table's own unit tests: every
/// setting takes its example and changes only itself, every refusal names
/// its variable (random text included), on/off settings mean what they
/// say, and each Markdown file of `docs` (relative to the workspace root)
/// shows the generated table. The declaring crate writes the struct's
/// `check_together(&self, env: &impl Fn(&str) -> Option<String>) ->
/// Result<(), ConfigError>`: the rules between its settings.
#[macro_export]
macro_rules! settings {
    (
        $(#[doc = $sdoc:literal])+
        pub struct $name:ident;
        docs [$($docfile:literal),+ $(,)?];
        $(
            $(#[doc = $doc:literal])+
            $field:ident: $ty:ty = $default:expr; set $arg:ty;
            get $getter:ident; env $var:literal, e.g. $example:literal;
            what $what:literal; values $values:expr; default $default_text:literal;
            agree $agree:literal; check $check:expr;
        )*
    ) => {
        $(#[doc = $sdoc])+
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name {
            $( $(#[doc = $doc])+ pub(crate) $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> $name {
                $name { $( $field: $default, )* }
            }
        }

        impl $name {
            /// Every setting, in the table's order.
            pub const SETTINGS: &'static [$crate::settings::Setting] = &[
                $( $crate::settings::Setting {
                    env: $var,
                    field: stringify!($field),
                    what: $what,
                    values: $values,
                    default: $default_text,
                    agree: $agree,
                    example: $example,
                }, )*
            ];

            /// Defaults overridden by the `UAT_*` environment variables.
            pub fn from_env() -> Result<$name, $crate::settings::ConfigError> {
                $name::from_lookup(|k| std::env::var(k).ok())
            }

            /// Defaults overridden by the lookup's values of the variables.
            pub fn from_lookup(
                env: impl Fn(&str) -> Option<String>,
            ) -> Result<$name, $crate::settings::ConfigError> {
                let mut c = $name::default();
                $(
                    if let Some(text) = env($var) {
                        let value = <$ty as $crate::settings::SettingValue>::parse($var, &text)?;
                        let check: fn(&$ty) -> Result<(), String> = $check;
                        check(&value)
                            .map_err(|why| $crate::settings::ConfigError(format!("{}={text}: {why}", $var)))?;
                        c.$field = value;
                    }
                )*
                c.check_together(&env)?;
                Ok(c)
            }

            /// The settings table of the README and the design docs,
            /// generated from the table's rows.
            pub fn settings_markdown() -> String {
                $crate::settings::markdown($name::SETTINGS)
            }

            $(
                $(#[doc = $doc])+
                #[doc = concat!("\n\nEnvironment: `", $var, "`.")]
                pub fn $field(mut self, value: $arg) -> $name {
                    self.$field = value.into();
                    self
                }

                #[doc = concat!("The value of `", stringify!($field), "` (`", $var, "`).")]
                #[allow(clippy::clone_on_copy)]
                pub fn $getter(&self) -> $ty {
                    self.$field.clone()
                }
            )*

        }

        #[cfg(test)]
        mod settings_table {
            use super::$name;
            use $crate::settings::{ConfigError, SettingValue as _, Settings as _, BOOL_SYNTAX};

            /// The table with one variable set.
            pub(super) fn only(var: &str, value: &str) -> Result<$name, ConfigError> {
                $name::from_lookup(|k| (k == var).then(|| value.to_string()))
            }

            /// Each `(variable, text)` is refused, naming both.
            pub(super) fn assert_refused(cases: &[(&str, &str)]) {
                for (var, bad) in cases {
                    let e = only(var, bad).unwrap_err();
                    assert!(e.0.contains(&format!("{var}={bad}")), "{e}");
                }
            }

            /// Each configuration (made by the builder) fails validation,
            /// naming its variable first.
            pub(super) fn assert_invalid(cases: impl IntoIterator<Item = ($name, &'static str)>) {
                assert!($name::default().validate().is_ok());
                for (c, var) in cases {
                    let e = c.validate().unwrap_err();
                    assert!(e.0.starts_with(var), "{e}");
                }
            }

            /// Each setting's word, in the table's order (tells settings
            /// apart).
            fn words(c: &$name) -> Vec<u64> {
                vec![$( c.$field.word() ),*]
            }

            #[test]
            fn every_setting_takes_its_example_and_nothing_else_changes() {
                let default = words(&$name::default());
                assert_eq!($name::from_lookup(|_| None).unwrap(), $name::default());
                for (i, s) in $name::SETTINGS.iter().enumerate() {
                    let c = only(s.env, s.example).unwrap_or_else(|e| panic!("{}={}: {e}", s.env, s.example));
                    for (j, (&got, &was)) in words(&c).iter().zip(&default).enumerate() {
                        if i == j {
                            assert_ne!(got, was, "{}={} did not change `{}`", s.env, s.example, s.field);
                        } else {
                            assert_eq!(got, was, "{}={} changed {}", s.env, s.example, $name::SETTINGS[j].env);
                        }
                    }
                    assert!(c.describe_settings().contains(&format!("{}=", s.env)));
                }
            }

            #[test]
            fn every_refusal_names_the_variable() {
                for s in $name::SETTINGS {
                    for bad in ["maybe", "-1", "", "1,,2", "99999999999999999999999"] {
                        if let Err(e) = only(s.env, bad) {
                            assert!(e.0.starts_with(&format!("{}={bad}", s.env)), "{e}");
                        }
                    }
                }
            }

            #[test]
            fn booleans_off_mean_off() {
                for s in $name::SETTINGS.iter().filter(|s| s.values == BOOL_SYNTAX) {
                    for (text, on) in [
                        ("on", true),
                        ("off", false),
                        ("1", true),
                        ("0", false),
                        ("true", true),
                        ("false", false),
                    ] {
                        let c = only(s.env, text).unwrap();
                        let d = only(s.env, if on { "off" } else { "on" }).unwrap();
                        assert_ne!(c, d, "{}={text}", s.env);
                    }
                }
            }

            #[test]
            fn random_text_never_panics() {
                // A property test of the parser: random bytes as every
                // variable's value are taken or refused, naming the variable.
                let mut x = 0x9e37_79b9_7f4a_7c15u64;
                let mut next = || {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                };
                let alphabet: Vec<char> = "0123456789KMGkmg,-+. onfftrueyieldspinpaper\u{e9}\u{1F600}"
                    .chars()
                    .collect();
                for _ in 0..4000 {
                    let len = (next() % 12) as usize;
                    let text: String = (0..len)
                        .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                        .collect();
                    let s = &$name::SETTINGS[(next() % $name::SETTINGS.len() as u64) as usize];
                    if let Err(e) = only(s.env, &text) {
                        assert!(e.0.contains(s.env), "{e}");
                    }
                }
            }

            #[test]
            fn the_docs_show_the_generated_table() {
                let table = $name::settings_markdown();
                for doc in [$($docfile),+] {
                    let text = std::fs::read_to_string(format!("{}/../{doc}", env!("CARGO_MANIFEST_DIR"))).unwrap();
                    assert!(
                        text.contains(&table),
                        "{doc}'s table of {} differs from the one its settings! declares; replace it with:\n\n{table}",
                        module_path!()
                    );
                }
            }
        }

        impl $crate::settings::Settings for $name {
            fn validate(&self) -> Result<(), $crate::settings::ConfigError> {
                use $crate::settings::SettingValue as _;
                $(
                    let check: fn(&$ty) -> Result<(), String> = $check;
                    check(&self.$field)
                        .map_err(|why| $crate::settings::ConfigError(format!("{}={}: {why}", $var, self.$field.show())))?;
                )*
                self.check_together(&|_: &str| None)
            }

            fn describe_settings(&self) -> String {
                use $crate::settings::SettingValue as _;
                [$( format!("{}={}", $var, self.$field.show()) ),*].join(" ")
            }

            fn agreement(&self) -> Vec<(&'static str, String)> {
                use $crate::settings::SettingValue as _;
                let mut v = Vec::new();
                $( if $agree { v.push(($var, self.$field.show())); } )*
                v
            }
        }
    };
}
