//! Durations in a policy file: whole seconds, written as YAML integers.

use std::fmt;

use serde::Deserializer;
use serde::de::{Error, Unexpected, Visitor};

use super::MAX_SECONDS;

/// Deserializes an optional whole number of seconds in `1..=MAX_SECONDS`, written as a YAML
/// integer: `5`, or in another base YAML reads as an integer (`0x10` is 16, as the YAML 1.2 core
/// schema and Kubernetes' own YAML reader take it).
///
/// A quoted number (`"5"`) is refused with its own message: it is a string, and Kubernetes' integer
/// fields (`periodSeconds: "5"` in a Pod) refuse it too ("cannot unmarshal string into Go struct
/// field ... of type int32"), so a policy that took it would teach a habit the cluster punishes
/// (break-it pass s22).
pub(super) fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    d.deserialize_any(Seconds).map(Some)
}

struct Seconds;

impl Seconds {
    fn in_range<E: Error>(v: i128) -> Result<u32, E> {
        if (1..=i128::from(MAX_SECONDS)).contains(&v) {
            return Ok(v as u32);
        }
        Err(E::custom(format!(
            "{v} is out of range: a duration here is a whole number of seconds from 1 to {MAX_SECONDS}"
        )))
    }
}

impl<'de> Visitor<'de> for Seconds {
    type Value = u32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a whole number of seconds from 1 to {MAX_SECONDS}")
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<u32, E> {
        Self::in_range(i128::from(v))
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<u32, E> {
        Self::in_range(i128::from(v))
    }

    fn visit_f64<E: Error>(self, v: f64) -> Result<u32, E> {
        Err(E::custom(format!(
            "{v} is not a whole number: a duration here is a whole number of seconds from 1 to {MAX_SECONDS}"
        )))
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<u32, E> {
        let t = v.trim();
        if t.parse::<i64>().is_ok() || t.parse::<f64>().is_ok() && t.contains(|c: char| c.is_ascii_digit()) {
            return Err(E::custom(format!(
                "{v:?} is a quoted number, a string: write it without quotes, as Kubernetes' own integer fields require"
            )));
        }
        Err(E::invalid_type(Unexpected::Str(v), &self))
    }
}
