//! Closed sets of wire strings ([`Wire`], declared with `wire_enum!`) and [`Open`], a value read
//! from a peer that is one of them or any other string, kept as sent.

use serde::{Deserialize, Deserializer, Serialize};

/// A closed set of wire strings.
pub trait Wire: Sized + 'static {
    const ALL: &'static [Self];
    fn wire(&self) -> &'static str;
}

/// An enum value from the host: one the bridge knows, or any other string, kept as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Open<T> {
    Known(T),
    Other(String),
}

impl<T: Wire> Open<T> {
    pub fn as_str(&self) -> &str {
        match self {
            Open::Known(value) => value.wire(),
            Open::Other(value) => value,
        }
    }

    pub fn known(&self) -> Option<&T> {
        match self {
            Open::Known(value) => Some(value),
            Open::Other(_) => None,
        }
    }

    pub fn is(&self, value: T) -> bool
    where
        T: PartialEq,
    {
        self.known() == Some(&value)
    }
}

impl<T: Wire> Default for Open<T> {
    fn default() -> Self {
        Open::Other(String::new())
    }
}

impl<'de, T: Wire + Clone> Deserialize<'de> for Open<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(match T::ALL.iter().find(|v| v.wire() == text) {
            Some(value) => Open::Known(value.clone()),
            None => Open::Other(text),
        })
    }
}

impl<T: Wire> Serialize for Open<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// An enum of wire strings: each variant with its text, [`Wire`], `as_str`, `Display` and
/// `Serialize` (as its text). Read from a peer through [`Open`], so that an unknown value is kept.
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Self] = &[$($name::$variant),+];

            /// Its text on the wire.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// The variant whose text is `text`, if any.
            pub fn from_wire(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl $crate::open::Wire for $name {
            const ALL: &'static [Self] = $name::ALL;
            fn wire(&self) -> &'static str {
                self.as_str()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    };
}
pub(crate) use wire_enum;
