//! A SARIF log as the mapping reads it: only the fields it uses, read straight from the tool's
//! output into these structs (no tree of every value the tool wrote), each of them lenient. A
//! field of another type than SARIF's reads as absent, as a lookup in a `serde_json::Value` would,
//! never as an error for the whole log; an array keeps its items' places (`ruleIndex` counts them).

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Log {
    pub(crate) runs: List<Obj<Run>>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Run {
    pub(crate) invocations: List<Obj<Invocation>>,
    pub(crate) tool: Obj<Tool>,
    pub(crate) original_uri_base_ids: Obj<HashMap<String, Obj<Based>>>,
    pub(crate) results: List<Obj<SarifResult>>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Invocation {
    pub(crate) execution_successful: Scalar,
    pub(crate) tool_execution_notifications: List<Obj<Notification>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Notification {
    pub(crate) message: Obj<Message>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Tool {
    pub(crate) driver: Obj<Driver>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Driver {
    pub(crate) rules: List<Obj<Rule>>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Rule {
    pub(crate) id: Scalar,
    pub(crate) help: Obj<Message>,
    pub(crate) full_description: Obj<Message>,
    pub(crate) short_description: Obj<Message>,
    pub(crate) help_uri: Scalar,
    pub(crate) default_configuration: Obj<Configuration>,
    pub(crate) message_strings: Obj<HashMap<String, Obj<Message>>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Configuration {
    pub(crate) level: Scalar,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Based {
    pub(crate) uri: Scalar,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SarifResult {
    pub(crate) rule_id: Scalar,
    pub(crate) rule: Obj<RuleReference>,
    pub(crate) rule_index: Scalar,
    pub(crate) level: Scalar,
    pub(crate) message: Obj<Message>,
    pub(crate) fixes: List<Obj<Fix>>,
    pub(crate) locations: List<Obj<Location>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct RuleReference {
    pub(crate) id: Scalar,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Message {
    pub(crate) text: Scalar,
    pub(crate) id: Scalar,
    pub(crate) arguments: List<Scalar>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Fix {
    pub(crate) description: Obj<Message>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Location {
    pub(crate) physical_location: Obj<PhysicalLocation>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct PhysicalLocation {
    pub(crate) artifact_location: Obj<ArtifactLocation>,
    pub(crate) region: Obj<Region>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ArtifactLocation {
    pub(crate) uri: Scalar,
    pub(crate) uri_base_id: Scalar,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Region {
    pub(crate) start_line: Scalar,
    pub(crate) start_column: Scalar,
    pub(crate) end_line: Scalar,
    pub(crate) end_column: Scalar,
}

impl Log {
    /// The log in a tool's JSON output; `None` when the output is no JSON object.
    pub(crate) fn parse(json: &[u8]) -> serde_json::Result<Option<Log>> {
        serde_json::from_slice::<Obj<Log>>(json).map(|log| log.0)
    }
}

/// A string, number or boolean field; anything else (an object, an array, null) reads as absent.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) enum Scalar {
    #[default]
    Absent,
    Text(String),
    Unsigned(u64),
    Other,
    Bool(bool),
}

impl Scalar {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Text(text) => Some(text),
            _ => None,
        }
    }

    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Scalar::Unsigned(n) => Some(*n),
            _ => None,
        }
    }

    pub(crate) fn is_false(&self) -> bool {
        *self == Scalar::Bool(false)
    }
}

/// An object field read as `T`; anything else reads as absent.
pub(crate) struct Obj<T>(pub(crate) Option<T>);

impl<T> Obj<T> {
    pub(crate) fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl<T> Default for Obj<T> {
    fn default() -> Obj<T> {
        Obj(None)
    }
}

/// An array field of lenient items, each in its place (`ruleIndex` counts them); `None` when the
/// field is absent or not an array.
pub(crate) struct List<T>(pub(crate) Option<Vec<T>>);

impl<T> Default for List<T> {
    fn default() -> List<T> {
        List(None)
    }
}

impl<T> List<T> {
    pub(crate) fn items(&self) -> impl Iterator<Item = &T> {
        self.0.iter().flatten()
    }
}

impl<T> List<Obj<T>> {
    /// The items that are objects.
    pub(crate) fn objects(&self) -> impl Iterator<Item = &T> {
        self.items().filter_map(Obj::get)
    }

    /// Item `index`, if it is an object.
    pub(crate) fn object(&self, index: usize) -> Option<&T> {
        self.0.as_ref()?.get(index)?.get()
    }
}

/// Whatever is not expected is read past, never refused: each visitor below takes every JSON type.
/// This is its part for a value that is not an object or an array: `$absent`.
macro_rules! anything_else {
    ($ty:ident, $absent:expr) => {
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            $ty::deserialize(d)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }
    };
}

/// Reads past an array.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Reads past an object.
fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Scalar, D::Error> {
        struct ScalarVisitor;
        impl<'de> Visitor<'de> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(b))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Scalar, E> {
                Ok(u64::try_from(n).map_or(Scalar::Other, Scalar::Unsigned))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Scalar, E> {
                Ok(Scalar::Unsigned(n))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Scalar, E> {
                Ok(Scalar::Text(s))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Absent)
            }
            fn visit_none<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Absent)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
                Scalar::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar, A::Error> {
                skip_seq(seq).map(|()| Scalar::Absent)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar, A::Error> {
                skip_map(map).map(|()| Scalar::Absent)
            }
        }
        deserializer.deserialize_any(ScalarVisitor)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Obj<T>, D::Error> {
        struct ObjVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
            type Value = Obj<T>;
            anything_else!(Obj, Obj(None));
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Obj<T>, A::Error> {
                skip_seq(seq).map(|()| Obj(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
            }
        }
        deserializer.deserialize_any(ObjVisitor(PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<List<T>, D::Error> {
        struct ListVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
            type Value = List<T>;
            anything_else!(List, List(None));
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(item) = seq.next_element::<T>()? {
                    items.push(item);
                }
                Ok(List(Some(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<List<T>, A::Error> {
                skip_map(map).map(|()| List(None))
            }
        }
        deserializer.deserialize_any(ListVisitor(PhantomData))
    }
}
