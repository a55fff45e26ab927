//! How a results file writes the harness's enums: as their text (`loan`, `waiting`,
//! `shared-memory`), through serde's `with`.

pub use transfer::{copied, is_copy};

/// A result's transfer as the file writes it: `loan`, or nothing for a copy.
pub mod transfer {
    use ipcbench_api::Transfer;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn copied() -> Transfer {
        Transfer::Copy
    }

    pub fn is_copy(t: &Transfer) -> bool {
        *t == Transfer::Copy
    }

    pub fn serialize<S: Serializer>(t: &Transfer, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(t.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Transfer, D::Error> {
        let text = String::deserialize(d)?;
        Transfer::parse(&text).ok_or_else(|| D::Error::custom(format!("unknown transfer {text:?}")))
    }
}

/// A library's kind as its text.
pub mod kind {
    use ipcbench_api::Kind;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(k: &Option<Kind>, s: S) -> Result<S::Ok, S::Error> {
        match k {
            Some(k) => s.serialize_some(k.as_str()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Kind>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(text) => {
                Kind::parse(&text).map(Some).ok_or_else(|| D::Error::custom(format!("unknown kind {text:?}")))
            }
        }
    }
}

/// Receive modes as the file writes them: `waiting`, `polling`.
pub mod mode {
    use ipcbench_api::RecvMode;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error};

    /// One mode as its text, for the `Option` and `Vec` fields below.
    #[derive(Serialize, Deserialize)]
    #[serde(transparent)]
    struct Text(#[serde(with = "self")] RecvMode);

    pub fn serialize<S: Serializer>(m: &RecvMode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(m.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RecvMode, D::Error> {
        let text = String::deserialize(d)?;
        RecvMode::parse(&text).ok_or_else(|| D::Error::custom(format!("unknown receive mode {text:?}")))
    }

    pub mod or_none {
        use super::*;

        pub fn serialize<S: Serializer>(m: &Option<RecvMode>, s: S) -> Result<S::Ok, S::Error> {
            m.map(Text).serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RecvMode>, D::Error> {
            Ok(Option::<Text>::deserialize(d)?.map(|m| m.0))
        }
    }

    pub mod each {
        use super::*;

        pub fn serialize<S: Serializer>(m: &[RecvMode], s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(m.iter().map(|&m| Text(m)))
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RecvMode>, D::Error> {
            Ok(Vec::<Text>::deserialize(d)?.into_iter().map(|m| m.0).collect())
        }
    }
}
