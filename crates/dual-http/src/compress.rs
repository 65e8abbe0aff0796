//! Frame-by-frame compression of an export (feature `compression`): each frame is compressed and
//! flushed as it goes out, so a client sees rows as they come and memory stays at one frame plus the
//! coder's window.

use std::io::Write;

use flate2::write::GzEncoder;

use crate::ContentCoding;

/// gzip level: fast (deflate level 1); an export is compressed once per download, on the way out.
const GZIP_LEVEL: u32 = 1;
/// zstd level: fast (level 1; 512 KiB window), so many concurrent exports stay cheap.
const ZSTD_LEVEL: i32 = 1;

/// A streaming compressor writing into a buffer that is drained after every frame.
pub(crate) enum Compressor {
    Gzip(GzEncoder<Vec<u8>>),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Gzip(_) => "Compressor::Gzip",
            Self::Zstd(_) => "Compressor::Zstd",
        })
    }
}

impl Compressor {
    /// A compressor for `coding`; `None` for identity.
    ///
    /// # Errors
    /// When the zstd context cannot be created (out of memory).
    pub(crate) fn new(coding: ContentCoding) -> std::io::Result<Option<Self>> {
        Ok(match coding {
            ContentCoding::Gzip => Some(Self::Gzip(GzEncoder::new(
                Vec::new(),
                flate2::Compression::new(GZIP_LEVEL),
            ))),
            ContentCoding::Zstd => Some(Self::Zstd(zstd::stream::write::Encoder::new(
                Vec::new(),
                ZSTD_LEVEL,
            )?)),
            ContentCoding::Identity => None,
        })
    }

    /// Compresses `data` and flushes, returning every compressed byte produced so far.
    pub(crate) fn frame(&mut self, data: &[u8]) -> std::io::Result<Vec<u8>> {
        self.write(data, false)
    }

    /// Compresses `data` and ends the stream (gzip trailer, zstd epilogue), returning the last bytes.
    pub(crate) fn finish(&mut self, data: &[u8]) -> std::io::Result<Vec<u8>> {
        self.write(data, true)
    }

    /// Compresses `data`, then flushes or (with `end`) finishes the stream, and takes the output.
    fn write(&mut self, data: &[u8], end: bool) -> std::io::Result<Vec<u8>> {
        let out = match self {
            Self::Gzip(encoder) => {
                write_then(encoder, data, end, GzEncoder::try_finish)?;
                encoder.get_mut()
            }
            Self::Zstd(encoder) => {
                write_then(encoder, data, end, zstd::stream::write::Encoder::do_finish)?;
                encoder.get_mut()
            }
        };
        Ok(std::mem::take(out))
    }
}

/// Writes `data` into `encoder`, then flushes it or (with `end`) ends its stream with `finish`.
fn write_then<E: Write>(
    encoder: &mut E,
    data: &[u8],
    end: bool,
    finish: impl FnOnce(&mut E) -> std::io::Result<()>,
) -> std::io::Result<()> {
    encoder.write_all(data)?;
    if end { finish(encoder) } else { encoder.flush() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn roundtrip(coding: ContentCoding) {
        let Ok(Some(mut compressor)) = Compressor::new(coding) else {
            panic!("a compressor for {coding:?}");
        };
        let mut wire = Vec::new();
        let mut plain = Vec::new();
        for i in 0..200 {
            let chunk = format!("{{\"i\":{i},\"text\":\"row number {i}\"}}\n").repeat(20);
            plain.extend_from_slice(chunk.as_bytes());
            let out = compressor.frame(chunk.as_bytes()).unwrap_or_default();
            assert!(!out.is_empty(), "every flushed frame produces bytes");
            wire.extend_from_slice(&out);
        }
        wire.extend(compressor.finish(b"end").unwrap_or_default());
        plain.extend_from_slice(b"end");
        let mut decoded = Vec::new();
        match coding {
            ContentCoding::Gzip => {
                let read = flate2::read::GzDecoder::new(&wire[..]).read_to_end(&mut decoded);
                assert!(read.is_ok());
            }
            _ => decoded = zstd::stream::decode_all(&wire[..]).unwrap_or_default(),
        }
        assert_eq!(decoded, plain);
        assert!(wire.len() < plain.len() / 4, "{} of {}", wire.len(), plain.len());
    }

    #[test]
    fn gzip_and_zstd_round_trip() {
        roundtrip(ContentCoding::Gzip);
        roundtrip(ContentCoding::Zstd);
        assert!(matches!(Compressor::new(ContentCoding::Identity), Ok(None)));
    }
}
