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

pub use crate::config::{at_least, fmt_size, ConfigError, SettingValue, BOOL_SYNTAX, COUNT_SYNTAX, SIZE_SYNTAX};

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
/// for what each row yields). The declaring crate writes the struct's
/// `check_together(&self, env: &impl Fn(&str) -> Option<String>) ->
/// Result<(), ConfigError>`: the rules between its settings.
#[macro_export]
macro_rules! settings {
    (
        $(#[doc = $sdoc:literal])+
        pub struct $name:ident;
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

            /// Each setting's word, in the table's order (tests tell
            /// settings apart by it).
            #[cfg(test)]
            fn words(&self) -> Vec<u64> {
                use $crate::settings::SettingValue as _;
                vec![$( self.$field.word() ),*]
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
