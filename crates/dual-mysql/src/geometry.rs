//! A spatial value (`GEOMETRY`, `POINT`, `POLYGON`, …) as the well-known text `ST_AsText` writes
//! (`"POINT(1 2)"`), prefixed `"SRID=4326;"` when it has a spatial reference system. MySQL sends it in
//! its storage format: the SRID (4 bytes, little-endian), then the well-known binary.

use std::fmt::Write as _;

/// Collections nested deeper than this are refused rather than followed.
const MAX_DEPTH: usize = 32;

/// The text of a value in MySQL's storage format.
pub(crate) fn well_known_text(bytes: &[u8]) -> Result<String, String> {
    let (srid, wkb) = bytes
        .split_at_checked(4)
        .ok_or("a geometry shorter than its SRID")?;
    let srid = u32::from_le_bytes(srid.try_into().map_err(|_| "a geometry shorter than its SRID")?);
    let mut out = String::new();
    if srid != 0 {
        let _ = write!(out, "SRID={srid};");
    }
    let mut reader = Reader { bytes: wkb, at: 0 };
    reader.geometry(&mut out, 0)?;
    Ok(out)
}

/// Well-known binary read from the front.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let slice = self
            .bytes
            .get(self.at..self.at + N)
            .ok_or("a geometry cut short")?;
        self.at += N;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        Ok(out)
    }

    fn u32(&mut self, little: bool) -> Result<u32, String> {
        let bytes = self.take::<4>()?;
        Ok(if little {
            u32::from_le_bytes(bytes)
        } else {
            u32::from_be_bytes(bytes)
        })
    }

    fn f64(&mut self, little: bool) -> Result<f64, String> {
        let bytes = self.take::<8>()?;
        Ok(if little {
            f64::from_le_bytes(bytes)
        } else {
            f64::from_be_bytes(bytes)
        })
    }

    /// One geometry with its header (byte order, type), written as `NAME(…)`.
    fn geometry(&mut self, out: &mut String, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("a geometry nested too deep".to_owned());
        }
        let [order] = self.take::<1>()?;
        let little = order == 1;
        let kind = self.u32(little)?;
        let name = match kind {
            1 => "POINT",
            2 => "LINESTRING",
            3 => "POLYGON",
            4 => "MULTIPOINT",
            5 => "MULTILINESTRING",
            6 => "MULTIPOLYGON",
            7 => "GEOMETRYCOLLECTION",
            other => return Err(format!("a geometry of unknown type {other}")),
        };
        out.push_str(name);
        if kind == 1 {
            out.push('(');
            self.point(out, little)?;
            out.push(')');
            return Ok(());
        }
        let count = self.u32(little)?;
        if count == 0 {
            out.push_str(" EMPTY");
            return Ok(());
        }
        out.push('(');
        for i in 0..count {
            if i > 0 {
                out.push(',');
            }
            match kind {
                2 => self.point(out, little)?,
                3 => self.ring(out, little)?,
                // A multipoint's points as MariaDB writes them: `MULTIPOINT(1 1,2 2)`.
                4 => {
                    let [order] = self.take::<1>()?;
                    let little = order == 1;
                    if self.u32(little)? != 1 {
                        return Err("a multipoint holding something else".to_owned());
                    }
                    self.point(out, little)?;
                }
                // The members' own names dropped: `MULTIPOLYGON(((0 0,…)))`.
                5 | 6 => {
                    let start = out.len();
                    self.geometry(out, depth + 1)?;
                    let member = out.split_off(start);
                    out.push_str(member.trim_start_matches(|c: char| c.is_ascii_alphabetic()));
                }
                _ => self.geometry(out, depth + 1)?,
            }
        }
        out.push(')');
        Ok(())
    }

    /// `(x y,x y,…)`.
    fn ring(&mut self, out: &mut String, little: bool) -> Result<(), String> {
        let count = self.u32(little)?;
        out.push('(');
        for i in 0..count {
            if i > 0 {
                out.push(',');
            }
            self.point(out, little)?;
        }
        out.push(')');
        Ok(())
    }

    /// `x y`.
    fn point(&mut self, out: &mut String, little: bool) -> Result<(), String> {
        let x = self.f64(little)?;
        let y = self.f64(little)?;
        number(out, x);
        out.push(' ');
        number(out, y);
        Ok(())
    }
}

/// A coordinate as `ST_AsText` writes it: `1`, `0.5`, `-2e30`.
fn number(out: &mut String, n: f64) {
    let start = out.len();
    let _ = write!(out, "{n:?}");
    if out[start..].ends_with(".0") {
        out.truncate(out.len() - 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Little-endian well-known binary of `kind` with the given body, after an SRID of 0.
    fn header(out: &mut Vec<u8>, kind: u32) {
        out.push(1);
        out.extend_from_slice(&kind.to_le_bytes());
    }

    fn point(out: &mut Vec<u8>, x: f64, y: f64) {
        out.extend_from_slice(&x.to_le_bytes());
        out.extend_from_slice(&y.to_le_bytes());
    }

    #[test]
    fn points_lines_and_collections_as_well_known_text() {
        let mut buf = 4326u32.to_le_bytes().to_vec();
        header(&mut buf, 1);
        point(&mut buf, 1.0, -2e30);
        assert_eq!(well_known_text(&buf).as_deref(), Ok("SRID=4326;POINT(1 -2e30)"));

        let mut buf = vec![0; 4];
        header(&mut buf, 7);
        buf.extend_from_slice(&2u32.to_le_bytes());
        header(&mut buf, 1);
        point(&mut buf, 1.0, 2.0);
        header(&mut buf, 6);
        buf.extend_from_slice(&1u32.to_le_bytes());
        header(&mut buf, 3);
        buf.extend_from_slice(&1u32.to_le_bytes());
        buf.extend_from_slice(&3u32.to_le_bytes());
        for (x, y) in [(0.0, 0.0), (1.5, 0.0), (0.0, 0.0)] {
            point(&mut buf, x, y);
        }
        assert_eq!(
            well_known_text(&buf).as_deref(),
            Ok("GEOMETRYCOLLECTION(POINT(1 2),MULTIPOLYGON(((0 0,1.5 0,0 0))))")
        );
        assert!(well_known_text(&buf[..buf.len() - 1]).is_err(), "cut short");
        assert!(well_known_text(&[0, 0]).is_err());
        let mut empty = vec![0; 4];
        header(&mut empty, 7);
        empty.extend_from_slice(&0u32.to_le_bytes());
        assert_eq!(well_known_text(&empty).as_deref(), Ok("GEOMETRYCOLLECTION EMPTY"));
    }
}
