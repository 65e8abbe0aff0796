//! Property tests of page arithmetic and request validation.

use dual_core::{
    Column, ColumnType, PageRequest, PageResponse, Row,
    page::{PageLimits, RequestError, ValidPage},
};
use proptest::prelude::*;
use serde_json::json;

fn rows(n: u64) -> Vec<Row> {
    (0..n)
        .map(|i| json!({"i": i}).as_object().cloned().unwrap_or_default())
        .collect()
}

fn columns() -> Vec<Column> {
    vec![
        Column::new("i", ColumnType::Integer),
        Column::new("name", ColumnType::String),
    ]
}

/// A JSON body: an object of up to four fields (the three a request has, often repeated, and
/// strangers) with values of every kind, or, now and then, an array or a scalar.
fn body() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        4 => Just("offset"),
        4 => Just("limit"),
        4 => Just("sort"),
        1 => Just("offest"),
        1 => Just(""),
    ];
    // JSON's whitespace, none or some, between every token.
    let space = prop_oneof![Just(""), Just(" "), Just("\n\t"), Just("\r\n ")];
    let object = (prop::collection::vec((name, value()), 0..4), space).prop_map(|(fields, space)| {
        let fields: Vec<String> = fields
            .iter()
            .map(|(key, value)| format!("{space}{key:?}{space}:{space}{value}{space}"))
            .collect();
        format!("{space}{{{}}}{space}", fields.join(","))
    });
    prop_oneof![
        8 => object,
        1 => value().prop_map(|value| format!("[{value}]")),
        1 => value(),
    ]
}

/// A field's value as JSON text: integers (negative and past `u64` too), integral and fractional
/// floats, strings, null, arrays, and sort objects good and bad.
fn value() -> impl Strategy<Value = String> {
    let column = prop_oneof![
        Just(r#""name""#),
        Just(r#""""#),
        Just(r#""na\"me""#),
        Just(r#""\u0069""#),
        Just("3"),
        Just("null"),
    ];
    let order = prop_oneof![
        Just(""),
        Just(r#", "order": "asc""#),
        Just(r#", "order": "desc""#),
        Just(r#", "order": null"#),
        Just(r#", "order": "up""#),
        Just(r#", "order": 1"#),
        Just(r#", "dir": "asc""#),
        Just(r#", "order": "asc", "order": "up""#),
    ];
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        (0u64..1_000).prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        (0u64..1_000).prop_map(|n| format!("{n}.0")),
        Just("1.5".to_owned()),
        Just("0".to_owned()),
        Just("-0".to_owned()),
        Just("1e2".to_owned()),
        Just("10E0".to_owned()),
        Just("18446744073709551616".to_owned()),
        Just("null".to_owned()),
        Just(r#""7""#.to_owned()),
        Just("true".to_owned()),
        Just("[1]".to_owned()),
        (column, order).prop_map(|(column, order)| format!(r#"{{"field": {column}{order}}}"#)),
        Just(r#"{"order": "asc"}"#.to_owned()),
    ]
}

proptest! {
    /// Simulates an executor over `total` rows: pages follow `next_offset` and see every row once.
    #[test]
    fn following_next_offset_visits_every_row_exactly_once(total in 0u64..2_000, limit in 1u64..300) {
        let mut offset = 0;
        let mut seen = 0;
        let mut pages = 0;
        loop {
            let page = ValidPage { offset, limit, sort: None };
            let available = total.saturating_sub(offset).min(page.fetch_limit());
            let response = PageResponse::from_rows(rows(available), &page, total);
            prop_assert!(response.returned_count <= limit);
            prop_assert_eq!(response.returned_count, response.data.len() as u64);
            prop_assert_eq!(response.has_previous, offset > 0);
            prop_assert_eq!(response.has_next, offset + response.returned_count < total);
            prop_assert_eq!(response.next_offset.is_some(), response.has_next);
            seen += response.returned_count;
            pages += 1;
            match response.next_offset {
                Some(next) => { prop_assert_eq!(next, offset + limit); offset = next; }
                None => break,
            }
        }
        prop_assert_eq!(seen, total);
        prop_assert_eq!(pages, total.div_ceil(limit).max(1));
    }

    #[test]
    fn valid_requests_round_trip_and_resolve(offset in proptest::option::of(0u64..1u64 << 53), limit in proptest::option::of(1u64..=10_000)) {
        let request = PageRequest { offset, limit, sort: None };
        let body = serde_json::to_vec(&request).expect("serialises");
        let parsed = PageRequest::from_json(&body).expect("parses");
        prop_assert_eq!(&parsed, &request);
        let page = parsed.validate(PageLimits::default(), &columns()).expect("valid");
        prop_assert_eq!(page.offset, offset.unwrap_or(0));
        prop_assert_eq!(page.limit, limit.unwrap_or(100));
    }

    #[test]
    fn limits_outside_the_range_are_rejected(limit in prop_oneof![Just(0u64), 10_001u64..u64::MAX]) {
        let request = PageRequest { offset: None, limit: Some(limit), sort: None };
        prop_assert_eq!(request.validate(PageLimits::default(), &columns()), Err(RequestError::LimitOutOfRange { max: 10_000 }));
    }

    #[test]
    fn negative_or_fractional_numbers_name_the_field(n in -1_000_000i64..-1, frac in 0.01f64..0.99) {
        for field in ["offset", "limit"] {
            for value in [json!(n), json!(1.0 + frac), json!("1"), json!(true), json!([1])] {
                let body = serde_json::to_vec(&json!({ field: value })).expect("serialises");
                let err = PageRequest::from_json(&body).expect_err("rejected");
                prop_assert_eq!(err.field(), Some(field));
            }
        }
    }

    /// Whatever shape a body has, `from_json` answers as parsing it into a `Value` and reading that
    /// with `from_value` does: the shortcut for the common shape never changes an answer.
    #[test]
    fn every_body_is_read_as_its_json_value_is(body in body()) {
        let parsed: serde_json::Value = serde_json::from_str(&body).expect("valid JSON");
        prop_assert_eq!(
            PageRequest::from_json(body.as_bytes()),
            PageRequest::from_value(&parsed),
            "{}",
            body
        );
    }

    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = PageRequest::from_json(&body);
    }
}

#[test]
fn request_errors_name_the_field() {
    let cases: [(&[u8], Option<&str>); 11] = [
        (b"{", None),
        (b"[1]", None),
        (b"{\"offest\": 1}", Some("offest")),
        (b"{\"sort\": \"name\"}", Some("sort")),
        (b"{\"sort\": {\"order\": \"asc\"}}", Some("sort.field")),
        (b"{\"sort\": {\"field\": 3}}", Some("sort.field")),
        (
            b"{\"sort\": {\"field\": \"i\", \"order\": \"up\"}}",
            Some("sort.order"),
        ),
        (
            b"{\"sort\": {\"field\": \"i\", \"dir\": \"asc\"}}",
            Some("sort.dir"),
        ),
        (b"{\"offset\": 1e400}", None),
        (b"{\"limit\": -1}", Some("limit")),
        (b"{\"offset\": 1.5}", Some("offset")),
    ];
    for (body, field) in cases {
        let Err(err) = PageRequest::from_json(body) else {
            panic!("{} accepted", String::from_utf8_lossy(body));
        };
        assert_eq!(err.field(), field, "{}", String::from_utf8_lossy(body));
        let message = err.to_string();
        if let Some(field) = field {
            assert!(message.contains(field), "{message}");
        }
    }
}

#[test]
fn defaults_nulls_and_sort() {
    for body in [
        &b""[..],
        b"  \n",
        b"{}",
        b"{\"offset\": null, \"limit\": null, \"sort\": null}",
    ] {
        assert_eq!(PageRequest::from_json(body), Ok(PageRequest::default()));
    }
    let request = PageRequest::from_json(br#"{"limit": 100.0, "sort": {"field": "name", "order": "desc"}}"#)
        .expect("ok");
    let page = request
        .validate(
            PageLimits {
                default_limit: 50,
                max_limit: 500,
            },
            &columns(),
        )
        .expect("valid");
    assert_eq!(page.limit, 100);
    assert_eq!(page.sort.map(|s| s.to_string()), Some("name:desc".to_owned()));
    let unknown = PageRequest::from_json(br#"{"sort": {"field": "password"}}"#).expect("parses");
    assert_eq!(
        unknown.validate(PageLimits::default(), &columns()),
        Err(RequestError::UnknownSortField("password".into()))
    );
    assert_eq!(
        PageRequest::default()
            .validate(
                PageLimits {
                    default_limit: 50,
                    max_limit: 500
                },
                &[]
            )
            .map(|p| p.limit),
        Ok(50)
    );
}

#[test]
fn sort_parameter_parsing() {
    assert_eq!(
        dual_core::page::parse_sort_param("enrollment:desc").map(|s| s.to_string()),
        Ok("enrollment:desc".to_owned())
    );
    assert_eq!(
        dual_core::page::parse_sort_param("name").map(|s| s.to_string()),
        Ok("name:asc".to_owned())
    );
    assert_eq!(
        dual_core::page::parse_sort_param("a:b:asc").map(|s| s.field),
        Ok("a:b".to_owned())
    );
    assert_eq!(
        dual_core::page::parse_sort_param("name:up"),
        Err(RequestError::InvalidSortOrder)
    );
    assert!(dual_core::page::parse_sort_param(":asc").is_err());
}
