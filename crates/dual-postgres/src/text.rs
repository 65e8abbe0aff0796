//! Parameters sent as text ([`Text`]), for PostgreSQL to parse as each parameter's type, as it would
//! a quoted literal: never interpolated into the SQL.

use bytes::BytesMut;
use tokio_postgres::types::{Format, IsNull, ToSql, Type, to_sql_checked};

use crate::decode::BoxError;
use crate::query::PgQuery;

/// A parameter sent as text, for PostgreSQL to parse as the parameter's type.
#[derive(Debug)]
pub(crate) struct Text<'a>(pub(crate) Option<&'a str>);

impl ToSql for Text<'_> {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self.0 {
            Some(text) => {
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
            None => Ok(IsNull::Yes),
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    fn encode_format(&self, _ty: &Type) -> Format {
        Format::Text
    }

    to_sql_checked!();
}

impl PgQuery {
    /// The query's parameters as [`Text`]s.
    pub(crate) fn texts(&self) -> Vec<Text<'_>> {
        self.params().iter().map(|p| Text(p.as_deref())).collect()
    }
}

/// `texts` as the parameters of a tokio-postgres call.
pub(crate) fn refs<'a>(texts: &'a [Text<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    texts.iter().map(|t| t as &(dyn ToSql + Sync)).collect()
}
