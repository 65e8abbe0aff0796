use dual_core::{Column, ColumnType};
use serde_json::{Value, json};

use super::*;

fn profile_of(rows: &[Value], columns: &[Column]) -> Profile {
    let mut profiler = Profiler::new(columns);
    for row in rows {
        profiler.add_row(&serde_json::to_vec(row).unwrap_or_default());
    }
    profiler.profile(columns, true)
}

fn column<'a>(profile: &'a Profile, name: &str) -> &'a dual_core::profile::ColumnProfile {
    profile
        .columns
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name} in {profile:?}"))
}

#[test]
fn a_small_result_is_profiled_exactly() {
    let rows: Vec<Value> = (0..10)
        .map(|i| {
            let state = ["CA", "TX", "CA", "NY", "CA"][i % 5];
            let fee = if i == 3 {
                Value::Null
            } else {
                json!(i as f64 * 1.5)
            };
            let day = format!("2024-01-0{}", i % 9 + 1);
            json!({"id": i, "state": state, "fee": fee, "day": day})
        })
        .collect();
    let columns = [Column::new("day", ColumnType::Date)];
    let profile = profile_of(&rows, &columns);
    assert_eq!((profile.rows, profile.complete), (10, true));
    assert!(profile.approximate.is_empty(), "{:?}", profile.approximate);
    let names: Vec<&str> = profile.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["day", "id", "state", "fee"],
        "declared first, then as seen"
    );

    let id = column(&profile, "id");
    assert_eq!(
        (id.kind.as_str(), id.count, id.nulls, id.distinct),
        ("integer", 10, 0, 10)
    );
    assert_eq!((id.min.clone(), id.max.clone()), (Some(json!(0)), Some(json!(9))));
    assert_eq!((id.mean, id.p50, id.p95), (Some(4.5), Some(4.0), Some(9.0)));
    assert_eq!(id.histogram.len(), 10, "one bin per integer: {:?}", id.histogram);
    assert!(id.histogram.iter().all(|b| b.count == 1));
    assert!(id.top.is_empty(), "no value repeats");

    let state = column(&profile, "state");
    assert_eq!((state.kind.as_str(), state.distinct), ("string", 3));
    assert_eq!(
        (state.min.clone(), state.max.clone()),
        (Some(json!("CA")), Some(json!("TX")))
    );
    let top: Vec<(Value, u64)> = state.top.iter().map(|t| (t.value.clone(), t.count)).collect();
    assert_eq!(top, [(json!("CA"), 6), (json!("NY"), 2), (json!("TX"), 2)]);

    let fee = column(&profile, "fee");
    assert_eq!((fee.kind.as_str(), fee.count, fee.nulls), ("number", 9, 1));
    assert_eq!(fee.mean, Some((45.0 - 3.0) * 1.5 / 9.0));
    let bins: u64 = fee.histogram.iter().map(|b| b.count).sum();
    assert_eq!((bins, fee.histogram.len()), (9, 20));
    assert_eq!(fee.histogram.first().map(|b| b.from), Some(0.0));
    assert_eq!(fee.histogram.last().map(|b| (b.to, b.count)), Some((13.5, 1)));

    let day = column(&profile, "day");
    assert_eq!(
        (day.kind.as_str(), day.min.clone()),
        ("date", Some(json!("2024-01-01")))
    );
}

#[test]
fn values_repeated_in_the_exact_set_then_past_it_keep_the_sum_and_the_range() {
    // Each of 600 values three times (counted in the exact set, summed from it), then 2,000 new
    // ones that overflow the set: the mean, range and counts are those of every value.
    let mut profiler = Profiler::default();
    let mut values = Vec::new();
    for round in 0..3 {
        for i in 0..600i64 {
            // The extremes of the repeated values come in the last round too: seen again, they are
            // compared with the range already.
            let x = if round == 2 { 599 - i } else { i };
            values.push(x - 300);
        }
    }
    values.extend((0..2_000i64).map(|i| 1_000 + i));
    let mut f_total = 0.0;
    for (i, x) in values.iter().enumerate() {
        let text = format!("t{:05}", x + 300);
        let f = format!("{x}.5");
        f_total += f.parse::<f64>().unwrap_or(0.0);
        profiler.add_row(format!(r#"{{"x":{x},"f":{f},"t":"{text}","i":{i}}}"#).as_bytes());
    }
    let profile = profiler.profile(&[], true);
    let total: i64 = values.iter().sum();
    let x = column(&profile, "x");
    assert_eq!(x.count, values.len() as u64);
    assert_eq!(
        x.mean,
        Some(total as f64 / values.len() as f64),
        "exact: every value counted once"
    );
    assert_eq!(
        (x.min.clone(), x.max.clone()),
        (Some(json!(-300)), Some(json!(2_999)))
    );
    let f = column(&profile, "f");
    let f_mean = f.mean.unwrap_or(0.0);
    assert!((f_mean - f_total / values.len() as f64).abs() < 1e-9, "{f_mean}");
    let bins: u64 = x.histogram.iter().map(|b| b.count).sum();
    assert_eq!(
        bins,
        values.len() as u64,
        "the sketch holds the set's values with their counts"
    );
    let t = column(&profile, "t");
    assert_eq!(
        (t.min.clone(), t.max.clone()),
        (Some(json!("t00000")), Some(json!("t03299")))
    );

    // Below the bound, repeats count in the top values and never move the range.
    let mut profiler = Profiler::default();
    for i in 0..1_000 {
        let x = [5, -2, 7, 5, 5][i % 5];
        profiler.add_row(format!(r#"{{"x":{x},"t":"{}"}}"#, ["m", "a", "z", "m", "m"][i % 5]).as_bytes());
    }
    let profile = profiler.profile(&[], true);
    let x = column(&profile, "x");
    assert_eq!(
        (x.min.clone(), x.max.clone(), x.mean),
        (Some(json!(-2)), Some(json!(7)), Some(4.0))
    );
    assert_eq!(
        x.top.first().map(|t| (t.value.clone(), t.count)),
        Some((json!(5), 600))
    );
    let t = column(&profile, "t");
    assert_eq!(
        (t.min.clone(), t.max.clone(), t.distinct),
        (Some(json!("a")), Some(json!("z")), 3)
    );
}

#[test]
fn past_the_exact_bound_distinct_and_quantiles_are_estimates_near_the_truth() {
    let n = 100_000u64;
    let mut profiler = Profiler::default();
    for i in 0..n {
        profiler.add_row(format!(r#"{{"x":{i},"s":"v{}"}}"#, i % 5_000).as_bytes());
    }
    let profile = profiler.profile(&[], true);
    let x = column(&profile, "x");
    assert!(profile.is_approximate("x", "distinct") && profile.is_approximate("x", "p50"));
    assert!(profile.is_approximate("x", "histogram"));
    let error = |estimate: f64, truth: f64| (estimate - truth).abs() / truth;
    assert!(error(x.distinct as f64, n as f64) < 0.05, "{}", x.distinct);
    assert!(error(x.p50.unwrap_or(0.0), 50_000.0) < 0.02, "{:?}", x.p50);
    assert!(error(x.p95.unwrap_or(0.0), 95_000.0) < 0.02, "{:?}", x.p95);
    assert_eq!(x.mean, Some(49_999.5), "the mean is exact");
    assert_eq!(
        (x.min.clone(), x.max.clone()),
        (Some(json!(0)), Some(json!(n - 1)))
    );
    let counts: Vec<u64> = x.histogram.iter().map(|b| b.count).collect();
    assert_eq!(counts.iter().sum::<u64>(), n);
    assert!(
        counts.iter().all(|c| error(*c as f64, 5_000.0) < 0.1),
        "{counts:?}"
    );
    let s = column(&profile, "s");
    assert!(error(s.distinct as f64, 5_000.0) < 0.05, "{}", s.distinct);
    assert!(s.top.is_empty(), "no top values past the exact bound");
}

#[test]
fn nan_and_infinities_are_counted_apart_and_never_poison_the_mean() {
    let rows = [
        json!({"v": 1.0}),
        json!({"v": "NaN"}),
        json!({"v": 3.0}),
        json!({"v": "Infinity"}),
        json!({"v": "-infinity"}),
        json!({"v": null}),
    ];
    let profile = profile_of(&rows, &[]);
    let v = column(&profile, "v");
    assert_eq!(v.kind, "number");
    assert_eq!((v.count, v.nulls, v.nan, v.infinities), (5, 1, 1, 2));
    assert_eq!(
        (v.mean, v.min.clone(), v.max.clone()),
        (Some(2.0), Some(json!(1.0)), Some(json!(3.0)))
    );
    // In a text column the same words are text.
    let words = profile_of(
        &[json!({"w": "NaN"}), json!({"w": "nan"}), json!({"w": "bread"})],
        &[],
    );
    let w = column(&words, "w");
    assert_eq!((w.kind.as_str(), w.nan, w.distinct), ("string", 0, 3));
    assert_eq!(
        (w.min.clone(), w.max.clone()),
        (Some(json!("NaN")), Some(json!("nan")))
    );
}

#[test]
fn a_column_that_changes_type_is_mixed_with_counts_per_type() {
    let rows = [
        json!({"c": 1}),
        json!({"c": "one"}),
        json!({"c": 2.5}),
        json!({"c": true}),
        json!({"c": [1]}),
    ];
    let profile = profile_of(&rows, &[]);
    let c = column(&profile, "c");
    assert_eq!(c.kind, "mixed");
    let types: Vec<(&str, u64)> = c.types.iter().map(|t| (t.kind.as_str(), t.count)).collect();
    assert_eq!(
        types,
        [
            ("boolean", 1),
            ("integer", 1),
            ("number", 1),
            ("string", 1),
            ("json", 1)
        ]
    );
    assert_eq!(c.distinct, 5);
}

#[test]
fn huge_values_never_make_the_profile_large() {
    let big = "é".repeat(100_000);
    let rows: Vec<Value> = (0..50).map(|i| json!({"t": format!("{i:02}{big}")})).collect();
    let profile = profile_of(&rows, &[]);
    let wire = serde_json::to_vec(&profile).unwrap_or_default();
    assert!(wire.len() < 4_096, "{} bytes", wire.len());
    let t = column(&profile, "t");
    assert_eq!(t.cut, ["min", "max"]);
    let min = t.min.as_ref().and_then(Value::as_str).unwrap_or_default();
    assert_eq!(min.chars().count(), dual_core::profile::TEXT_CHARS + 1);
    assert!(min.starts_with("00é") && min.ends_with(dual_core::profile::CUT_MARKER));
    assert!(
        t.max
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or_default()
            .starts_with("49")
    );
    assert_eq!(
        t.distinct, 50,
        "the exact bound counts bytes kept, not bytes seen"
    );
}

#[test]
fn rows_without_a_key_count_it_as_null_and_escaped_text_is_read_as_text() {
    let mut profiler = Profiler::default();
    profiler.add_row(br#"{"a":"x\u00e9","b":1}"#);
    profiler.add_row(br#"{"b":2}"#);
    profiler.add_row(r#"{"a":"xé"}"#.as_bytes());
    profiler.add_row(b"not json");
    let profile = profiler.profile(&[], true);
    let a = column(&profile, "a");
    assert_eq!(
        (a.count, a.nulls, a.distinct),
        (2, 2, 1),
        "one text, escaped or not"
    );
    let b = column(&profile, "b");
    assert_eq!((b.count, b.nulls), (2, 2));
}

#[test]
fn columns_past_the_cap_are_counted_not_kept() {
    let mut profiler = Profiler::default();
    let wide: serde_json::Map<String, Value> = (0..MAX_COLUMNS + 7)
        .map(|i| (format!("c{i}"), json!(i)))
        .collect();
    profiler.add_row(&serde_json::to_vec(&wide).unwrap_or_default());
    let profile = profiler.profile(&[], true);
    assert_eq!((profile.columns.len(), profile.columns_omitted), (MAX_COLUMNS, 7));
}

#[test]
fn an_empty_or_all_null_column_takes_its_declared_type() {
    let columns = [Column::new("n", ColumnType::Integer)];
    let profile = profile_of(&[json!({"n": null, "m": null})], &columns);
    assert_eq!(column(&profile, "n").kind, "integer");
    assert_eq!(column(&profile, "m").kind, "null");
    assert_eq!(column(&profile, "m").nulls, 1);
}

#[test]
fn long_distinct_texts_pass_the_exact_bound_by_bytes_and_the_estimate_stays_within_the_values() {
    let mut profiler = Profiler::default();
    for i in 0..300 {
        profiler.add_row(format!(r#"{{"t":"{i:03}{}"}}"#, "x".repeat(400)).as_bytes());
    }
    let profile = profiler.profile(&[], true);
    let t = column(&profile, "t");
    assert!(profile.is_approximate("t", "distinct"));
    assert!(t.distinct <= 300 && t.distinct >= 250, "{}", t.distinct);
    assert!(t.top.is_empty());
}

#[test]
fn a_decoded_row_is_profiled_as_its_json_is() {
    let rows: Vec<Value> = (0..3_000u64)
        .map(|i| {
            let maybe = if i % 7 == 0 { Value::Null } else { json!(i % 97) };
            json!({"i": i, "f": i as f64 / 3.0, "s": format!("é{}", i % 1500), "b": i % 2 == 0,
                   "n": maybe, "j": {"k": i % 3}, "nan": if i % 5 == 0 { json!("NaN") } else { json!(1.5) }})
        })
        .collect();
    let (mut parsed, mut decoded) = (Profiler::default(), Profiler::default());
    for row in &rows {
        parsed.add_row(&serde_json::to_vec(row).unwrap_or_default());
        decoded.add_decoded(row.as_object().unwrap_or(&serde_json::Map::new()));
    }
    assert_eq!(decoded.profile(&[], true), parsed.profile(&[], true));
}
