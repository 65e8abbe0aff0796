//! Columns of types without a binary decoder, asked for as PostgreSQL's own text.
//!
//! tokio-postgres asks for every column in binary; [`decode`](crate::decode) reads the binary format
//! of the common types (numbers, text, times, `json`, `uuid`, `bytea`, their arrays). Any other type —
//! `pg_lsn`, records and composites, ranges and multiranges, `money`, `inet`, `bit`, `xml`,
//! `tsvector`, geometric types, `reg*`, extension types — would be opaque bytes. A statement with such
//! a column is prepared again wrapped in a projection that casts that column to `text` (an array of
//! them to `text[]`), so PostgreSQL writes the value as it does for `psql`: `"16/B374D848"`, `"(1,a)"`,
//! `"[1,5)"`. Statements of decoded types only are not wrapped and cost nothing more.

use tokio_postgres::types::{Kind, Type};

/// Whether [`decode`](crate::decode) reads values of `ty` from their binary format.
pub(crate) fn decoded(ty: &Type) -> bool {
    match *ty {
        Type::BOOL
        | Type::INT2
        | Type::INT4
        | Type::INT8
        | Type::OID
        | Type::FLOAT4
        | Type::FLOAT8
        | Type::NUMERIC
        | Type::BYTEA
        | Type::DATE
        | Type::TIME
        | Type::TIMETZ
        | Type::TIMESTAMP
        | Type::TIMESTAMPTZ
        | Type::INTERVAL
        | Type::UUID
        | Type::JSON
        | Type::JSONB
        | Type::VOID
        | Type::CHAR => true,
        _ => match ty.kind() {
            Kind::Array(element) => decoded(element),
            Kind::Domain(base) => decoded(base),
            _ => is_text(ty),
        },
    }
}

/// Whether the binary format of `ty` is its text (in the connection's encoding, UTF-8).
pub(crate) fn is_text(ty: &Type) -> bool {
    match *ty {
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => true,
        // citext (an extension: its OID varies) sends its text as `text` does.
        _ => {
            matches!(ty.kind(), Kind::Enum(_)) || (ty.name() == "citext" && matches!(ty.kind(), Kind::Simple))
        }
    }
}

/// `sql` wrapped so that every column [`decoded`] cannot read comes as `text` (or `text[]`), or
/// `None` when every column is decoded. Also `None` when two columns share a name: such a result is
/// refused by name later, and a projection could not tell them apart.
pub(crate) fn wrapped(sql: &str, columns: &[(&str, &Type)]) -> Option<String> {
    if columns.iter().all(|(_, ty)| decoded(ty)) {
        return None;
    }
    let repeated = columns
        .iter()
        .enumerate()
        .any(|(at, (name, _))| columns[..at].iter().any(|(other, _)| other == name));
    if repeated {
        return None;
    }
    let mut out = String::from("SELECT ");
    for (at, (name, ty)) in columns.iter().enumerate() {
        if at > 0 {
            out.push_str(", ");
        }
        let quoted = format!("\"{}\"", name.replace('"', "\"\""));
        out.push_str(&quoted);
        if !decoded(ty) {
            // `record[]` (`ARRAY[ROW(1, 'a')]`) is a pseudo-type, yet an array all the same.
            let array = matches!(ty.kind(), Kind::Array(_)) || **ty == Type::RECORD_ARRAY;
            let cast = if array { "::text[]" } else { "::text" };
            out.push_str(cast);
            out.push_str(" AS ");
            out.push_str(&quoted);
        }
    }
    out.push_str(" FROM (\n");
    out.push_str(sql);
    out.push_str("\n) AS dual_text");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_columns_without_a_decoder_are_cast() {
        assert_eq!(
            wrapped("SELECT 1", &[("a", &Type::INT4), ("b", &Type::TEXT_ARRAY)]),
            None
        );
        assert_eq!(
            wrapped(
                "SELECT …",
                &[
                    ("id", &Type::INT8),
                    ("lsn", &Type::PG_LSN),
                    ("a\"b", &Type::INT4_RANGE_ARRAY),
                ]
            )
            .as_deref(),
            Some(
                "SELECT \"id\", \"lsn\"::text AS \"lsn\", \"a\"\"b\"::text[] AS \"a\"\"b\" FROM (\nSELECT …\n) AS dual_text"
            )
        );
        assert_eq!(
            wrapped("SELECT …", &[("x", &Type::RECORD), ("x", &Type::INT4)]),
            None,
            "a repeated name is refused later, not made ambiguous"
        );
        for ty in [
            Type::RECORD,
            Type::MONEY,
            Type::INET,
            Type::XML,
            Type::POINT,
            Type::REGCLASS,
            Type::BIT,
        ] {
            assert!(!decoded(&ty), "{ty}");
        }
        for ty in [
            Type::VOID,
            Type::CHAR,
            Type::NAME,
            Type::INT2_VECTOR,
            Type::UUID_ARRAY,
        ] {
            assert!(decoded(&ty), "{ty}");
        }
    }
}
