//! Frame streams: YUV4MPEG2 (`.y4m`, what `ffmpeg -f yuv4mpegpipe` reads and writes) and raw
//! RGBA8 frames, read one frame at a time so a video of any length goes through a preset in
//! bounded memory.
//!
//! Colour: Y4M frames are converted with BT.601 coefficients, limited range unless the header
//! says `XCOLORRANGE=FULL` — what ffmpeg's swscale assumes when neither side names a matrix — and
//! 4:2:0 and 4:2:2 chroma is upsampled by repeating each sample over the pixels it covers.
//! Written Y4M is 4:4:4, BT.601 limited range, marked `XCOLORRANGE=LIMITED`; alpha is dropped
//! (Y4M has none). Raw frames are `width * height * 4` bytes of RGBA, rows top to bottom
//! (ffmpeg's `-f rawvideo -pix_fmt rgba`).

use std::io::{BufRead, Read, Write};

use crate::texture::Texture;

/// The longest Y4M stream or frame header accepted, in bytes.
const MAX_HEADER_BYTES: usize = 4096;

/// Why a frame stream could not be read or written; the message names the stream and what
/// was expected.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct VideoError {
    /// The whole message.
    pub message: String,
}

fn error(stream: &str, message: impl std::fmt::Display) -> VideoError {
    VideoError {
        message: format!("{stream}: {message}"),
    }
}

/// How a stream's frames are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFormat {
    /// YUV4MPEG2.
    Y4m,
    /// Raw RGBA8 frames of a size given out of band.
    RawRgba,
}

/// Y4M chroma layouts softgpu reads (8 bits per sample).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chroma {
    Mono,
    C420,
    C422,
    C444,
}

impl Chroma {
    fn parse(value: &str) -> Option<Chroma> {
        Some(match value {
            "mono" => Chroma::Mono,
            "420" | "420jpeg" | "420paldv" | "420mpeg2" => Chroma::C420,
            "422" => Chroma::C422,
            "444" => Chroma::C444,
            _ => return None,
        })
    }

    /// The size of one chroma plane of a `width` x `height` frame.
    fn plane_size(self, width: usize, height: usize) -> (usize, usize) {
        match self {
            Chroma::Mono => (0, 0),
            Chroma::C420 => (width.div_ceil(2), height.div_ceil(2)),
            Chroma::C422 => (width.div_ceil(2), height),
            Chroma::C444 => (width, height),
        }
    }
}

/// Reads frames from a stream as they arrive.
pub struct FrameReader<R: BufRead> {
    reader: R,
    name: String,
    format: StreamFormat,
    width: u32,
    height: u32,
    chroma: Chroma,
    full_range: bool,
    frame_rate: (u64, u64),
    buffer: Vec<u8>,
    frames: u64,
}

/// How a header line read ended.
enum HeaderLine {
    /// A whole line (without its `\n`).
    Line(Vec<u8>),
    /// The stream ended before any byte.
    End,
    /// The stream ended, or [`MAX_HEADER_BYTES`] passed, before a `\n`: the bytes read.
    Unterminated(Vec<u8>),
}

/// Reads a line ending in `\n` of at most [`MAX_HEADER_BYTES`].
fn read_header_line(
    reader: &mut impl BufRead,
    name: &str,
    what: &str,
) -> Result<HeaderLine, VideoError> {
    let mut line = Vec::new();
    let read = reader
        .take(MAX_HEADER_BYTES as u64 + 1)
        .read_until(b'\n', &mut line)
        .map_err(|e| error(name, format!("reading the {what}: {e}")))?;
    Ok(if read == 0 {
        HeaderLine::End
    } else if line.last() == Some(&b'\n') {
        line.pop();
        HeaderLine::Line(line)
    } else {
        HeaderLine::Unterminated(line)
    })
}

/// The header line as text, or the error an unterminated one gets.
fn header_text(line: HeaderLine, name: &str, what: &str) -> Result<Option<String>, VideoError> {
    match line {
        HeaderLine::End => Ok(None),
        HeaderLine::Unterminated(bytes) if bytes.len() > MAX_HEADER_BYTES => Err(error(
            name,
            format!("the {what} is longer than {MAX_HEADER_BYTES} bytes"),
        )),
        HeaderLine::Unterminated(_) => {
            Err(error(name, format!("the stream ends inside the {what}")))
        }
        HeaderLine::Line(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| error(name, format!("the {what} is not ASCII text"))),
    }
}

impl<R: BufRead> FrameReader<R> {
    /// A Y4M stream: reads and checks its header (`name` is how errors call the stream).
    /// Frames larger than [`Texture::MAX_DIMENSION`] on a side are refused here, before any
    /// frame is read.
    pub fn y4m(mut reader: R, name: &str) -> Result<FrameReader<R>, VideoError> {
        let line = read_header_line(&mut reader, name, "YUV4MPEG2 header")?;
        let starts_right = match &line {
            HeaderLine::Line(b) | HeaderLine::Unterminated(b) => b.starts_with(b"YUV4MPEG2 "),
            HeaderLine::End => true,
        };
        if !starts_right {
            return Err(error(
                name,
                "not a YUV4MPEG2 stream: expected it to start with `YUV4MPEG2 ` (ffmpeg writes one with `-f yuv4mpegpipe`)",
            ));
        }
        let header = header_text(line, name, "YUV4MPEG2 header")?
            .ok_or_else(|| error(name, "the stream is empty: expected a YUV4MPEG2 header"))?;
        let mut fields = header.split(' ');
        fields.next();
        let (mut width, mut height) = (None, None);
        let mut chroma = Chroma::C420;
        let mut full_range = false;
        let mut frame_rate = (25, 1);
        for field in fields.filter(|f| !f.is_empty()) {
            // The tag is the first character, which need not be ASCII in a hostile header.
            let Some(first) = field.chars().next() else {
                continue;
            };
            let (tag, value) = field.split_at(first.len_utf8());
            match tag {
                "W" | "H" => {
                    let v: u32 = value
                        .parse()
                        .ok()
                        .filter(|v| (1..=Texture::MAX_DIMENSION).contains(v))
                        .ok_or_else(|| {
                            error(
                                name,
                                format!(
                                    "header field `{field}`: expected a size of 1..={}",
                                    Texture::MAX_DIMENSION
                                ),
                            )
                        })?;
                    if tag == "W" {
                        width = Some(v);
                    } else {
                        height = Some(v);
                    }
                }
                "C" => {
                    chroma = Chroma::parse(value).ok_or_else(|| {
                        error(
                            name,
                            format!(
                                "header field `{field}`: softgpu reads 8-bit mono, 420, 422 and 444 (ffmpeg: `-pix_fmt yuv420p` or `yuv444p`)"
                            ),
                        )
                    })?
                }
                "F" => {
                    frame_rate = value
                        .split_once(':')
                        .and_then(|(n, d)| Some((n.parse().ok()?, d.parse().ok()?)))
                        .filter(|&(n, d): &(u64, u64)| n > 0 && d > 0)
                        .ok_or_else(|| {
                            error(name, format!("header field `{field}`: expected F<num>:<den>"))
                        })?
                }
                "X" => {
                    if let Some(range) = value.strip_prefix("COLORRANGE=") {
                        full_range = range.eq_ignore_ascii_case("FULL");
                    }
                }
                "I" if !matches!(value, "p" | "?") => {
                    return Err(error(
                        name,
                        format!("header field `{field}`: interlaced frames are not supported (expected Ip)"),
                    ));
                }
                _ => {}
            }
        }
        let (Some(width), Some(height)) = (width, height) else {
            return Err(error(name, "the YUV4MPEG2 header has no W or H field"));
        };
        Ok(FrameReader {
            reader,
            name: name.to_string(),
            format: StreamFormat::Y4m,
            width,
            height,
            chroma,
            full_range,
            frame_rate,
            buffer: Vec::new(),
            frames: 0,
        })
    }

    /// A stream of raw RGBA8 frames of `width` x `height`.
    pub fn raw_rgba(reader: R, name: &str, width: u32, height: u32) -> FrameReader<R> {
        FrameReader {
            reader,
            name: name.to_string(),
            format: StreamFormat::RawRgba,
            width,
            height,
            chroma: Chroma::C444,
            full_range: true,
            frame_rate: (1, 1),
            buffer: Vec::new(),
            frames: 0,
        }
    }

    /// The size of every frame.
    pub fn frame_size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The stream's frame rate as numerator and denominator (Y4M's `F`; 25:1 when absent, as
    /// ffmpeg assumes; 1:1 for raw streams).
    pub fn frame_rate(&self) -> (u64, u64) {
        self.frame_rate
    }

    /// How the stream is laid out.
    pub fn format(&self) -> StreamFormat {
        self.format
    }

    /// The next frame as an RGBA8 texture, or `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<Texture>, VideoError> {
        let (w, h) = (self.width as usize, self.height as usize);
        let frame_number = self.frames + 1;
        let planes_len = match self.format {
            StreamFormat::RawRgba => w * h * 4,
            StreamFormat::Y4m => {
                let line = read_header_line(&mut self.reader, &self.name, "frame header")?;
                let Some(line) = header_text(line, &self.name, "frame header")? else {
                    return Ok(None);
                };
                if line != "FRAME" && !line.starts_with("FRAME ") {
                    return Err(error(
                        &self.name,
                        format!(
                            "frame {frame_number}: expected a `FRAME` header, found `{}`",
                            line.chars().take(40).collect::<String>()
                        ),
                    ));
                }
                let (cw, ch) = self.chroma.plane_size(w, h);
                w * h + 2 * cw * ch
            }
        };
        // Read as the bytes arrive (the buffer grows with them), so a header that claims a huge
        // frame costs nothing until the frame's bytes are really there.
        self.buffer.clear();
        (&mut self.reader)
            .take(planes_len as u64)
            .read_to_end(&mut self.buffer)
            .map_err(|e| error(&self.name, format!("frame {frame_number}: {e}")))?;
        let filled = self.buffer.len();
        if filled == 0 && self.format == StreamFormat::RawRgba {
            return Ok(None);
        }
        if filled < planes_len {
            return Err(error(
                &self.name,
                format!(
                    "frame {frame_number} is cut short: {filled} of its {planes_len} bytes ({}x{} {})",
                    self.width,
                    self.height,
                    match self.format {
                        StreamFormat::RawRgba => "RGBA8",
                        StreamFormat::Y4m => "YUV",
                    }
                ),
            ));
        }
        self.frames += 1;
        let rgba = match self.format {
            StreamFormat::RawRgba => std::mem::take(&mut self.buffer),
            StreamFormat::Y4m => yuv_to_rgba(&self.buffer, w, h, self.chroma, self.full_range),
        };
        Texture::from_rgba8(self.width, self.height, rgba)
            .map(Some)
            .map_err(|e| error(&self.name, format!("frame {frame_number}: {e}")))
    }
}

/// BT.601 luma weights.
const KR: f32 = 0.299;
const KB: f32 = 0.114;
const KG: f32 = 1.0 - KR - KB;

fn to_byte(v: f32) -> u8 {
    (v * 255.0).round().clamp(0.0, 255.0) as u8
}

fn yuv_to_rgba(planes: &[u8], w: usize, h: usize, chroma: Chroma, full_range: bool) -> Vec<u8> {
    let (cw, ch) = chroma.plane_size(w, h);
    let (y_plane, rest) = planes.split_at(w * h);
    let (u_plane, v_plane) = rest.split_at(cw * ch);
    let (y_offset, y_scale, c_scale) = if full_range {
        (0.0, 255.0, 255.0)
    } else {
        (16.0, 219.0, 224.0)
    };
    let mut out = Vec::with_capacity(w * h * 4);
    for row in 0..h {
        for col in 0..w {
            let luma = (y_plane[row * w + col] as f32 - y_offset) / y_scale;
            let (pb, pr) = if chroma == Chroma::Mono {
                (0.0, 0.0)
            } else {
                let cx = if cw == w { col } else { col / 2 };
                let cy = if ch == h { row } else { row / 2 };
                let i = cy * cw + cx;
                (
                    (u_plane[i] as f32 - 128.0) / c_scale,
                    (v_plane[i] as f32 - 128.0) / c_scale,
                )
            };
            let r = luma + 2.0 * (1.0 - KR) * pr;
            let b = luma + 2.0 * (1.0 - KB) * pb;
            let g = (luma - KR * r - KB * b) / KG;
            out.extend_from_slice(&[to_byte(r), to_byte(g), to_byte(b), 255]);
        }
    }
    out
}

/// Writes frames to a stream as they are rendered.
pub struct FrameWriter<W: Write> {
    writer: W,
    name: String,
    format: StreamFormat,
    frame_rate: (u64, u64),
    size: Option<(u32, u32)>,
    planes: Vec<u8>,
}

impl<W: Write> FrameWriter<W> {
    /// A writer of `format` frames; Y4M streams get `frame_rate` in their header, written with
    /// the first frame (whose size every later frame must have).
    pub fn new(writer: W, name: &str, format: StreamFormat, frame_rate: (u64, u64)) -> Self {
        FrameWriter {
            writer,
            name: name.to_string(),
            format,
            frame_rate,
            size: None,
            planes: Vec::new(),
        }
    }

    /// Writes one frame (its RGBA8 readback).
    pub fn write_frame(&mut self, frame: &Texture) -> Result<(), VideoError> {
        let (w, h) = (frame.width(), frame.height());
        let io = |e: std::io::Error| error(&self.name, e);
        match self.size {
            None => {
                if self.format == StreamFormat::Y4m {
                    writeln!(
                        self.writer,
                        "YUV4MPEG2 W{w} H{h} F{}:{} Ip A1:1 C444 XCOLORRANGE=LIMITED",
                        self.frame_rate.0, self.frame_rate.1
                    )
                    .map_err(io)?;
                }
                self.size = Some((w, h));
            }
            Some(size) if size != (w, h) => {
                return Err(error(
                    &self.name,
                    format!(
                        "a {w}x{h} frame after {}x{} frames: a stream keeps one size",
                        size.0, size.1
                    ),
                ))
            }
            Some(_) => {}
        }
        let rgba = frame.to_rgba8();
        match self.format {
            StreamFormat::RawRgba => self.writer.write_all(&rgba).map_err(io)?,
            StreamFormat::Y4m => {
                rgba_to_yuv444(&rgba, &mut self.planes);
                self.writer.write_all(b"FRAME\n").map_err(io)?;
                self.writer.write_all(&self.planes).map_err(io)?;
            }
        }
        Ok(())
    }

    /// Flushes what was written.
    pub fn finish(mut self) -> Result<(), VideoError> {
        self.writer.flush().map_err(|e| error(&self.name, e))
    }
}

/// RGBA8 to planar 4:4:4 BT.601 limited-range YUV (alpha dropped).
fn rgba_to_yuv444(rgba: &[u8], planes: &mut Vec<u8>) {
    let n = rgba.len() / 4;
    planes.clear();
    planes.resize(3 * n, 0);
    let (y_plane, rest) = planes.split_at_mut(n);
    let (u_plane, v_plane) = rest.split_at_mut(n);
    for (i, px) in rgba.chunks_exact(4).enumerate() {
        let [r, g, b] = [px[0], px[1], px[2]].map(|c| c as f32 / 255.0);
        let luma = KR * r + KG * g + KB * b;
        let pb = (b - luma) / (2.0 * (1.0 - KB));
        let pr = (r - luma) / (2.0 * (1.0 - KR));
        y_plane[i] = (16.0 + 219.0 * luma).round().clamp(0.0, 255.0) as u8;
        u_plane[i] = (128.0 + 224.0 * pb).round().clamp(0.0, 255.0) as u8;
        v_plane[i] = (128.0 + 224.0 * pr).round().clamp(0.0, 255.0) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient(w: u32, h: u32) -> Texture {
        let mut data = Vec::new();
        for y in 0..h {
            for x in 0..w {
                data.extend_from_slice(&[(x * 255 / w) as u8, (y * 255 / h) as u8, 128, 255]);
            }
        }
        Texture::from_rgba8(w, h, data).unwrap()
    }

    #[test]
    fn y4m_round_trip_stays_within_a_few_steps() {
        let frame = gradient(17, 9);
        let mut bytes = Vec::new();
        let mut writer = FrameWriter::new(&mut bytes, "out", StreamFormat::Y4m, (30, 1));
        writer.write_frame(&frame).unwrap();
        writer.write_frame(&frame).unwrap();
        writer.finish().unwrap();
        let mut reader = FrameReader::y4m(&bytes[..], "in").unwrap();
        assert_eq!(reader.frame_size(), (17, 9));
        assert_eq!(reader.frame_rate(), (30, 1));
        for _ in 0..2 {
            let back = reader.next_frame().unwrap().unwrap();
            for (a, b) in back.to_rgba8().iter().zip(frame.to_rgba8()) {
                assert!((*a as i32 - b as i32).abs() <= 2, "{a} vs {b}");
            }
        }
        assert!(reader.next_frame().unwrap().is_none());
    }

    #[test]
    fn y4m_420_limited_gray_levels_decode_exactly() {
        // 2x2 frame: luma 16 (black) and 235 (white), neutral chroma.
        let mut bytes = b"YUV4MPEG2 W2 H2 F25:1 C420jpeg\nFRAME\n".to_vec();
        bytes.extend_from_slice(&[16, 235, 235, 16, 128, 128]);
        let mut reader = FrameReader::y4m(&bytes[..], "in").unwrap();
        let rgba = reader.next_frame().unwrap().unwrap().to_rgba8();
        assert_eq!(&rgba[0..4], &[0, 0, 0, 255]);
        assert_eq!(&rgba[4..8], &[255, 255, 255, 255]);
    }

    #[test]
    fn bad_streams_give_errors_naming_the_stream() {
        let cases: [(&[u8], &str); 6] = [
            (b"", "empty"),
            (b"RIFF....", "not a YUV4MPEG2 stream"),
            (b"YUV4MPEG2 W0 H2\n", "W0"),
            (b"YUV4MPEG2 W99999999999 H2\n", "W99999999999"),
            (b"YUV4MPEG2 W2 H2 C420p10\n", "C420p10"),
            (b"YUV4MPEG2 H2\n", "no W or H"),
        ];
        for (bytes, expected) in cases {
            let err = FrameReader::y4m(bytes, "clip.y4m")
                .err()
                .expect("must fail");
            assert!(err.message.starts_with("clip.y4m: "), "{}", err.message);
            assert!(err.message.contains(expected), "{}", err.message);
        }
        // A field whose first character is not ASCII is an unknown field (found by fuzzing:
        // splitting off one byte panicked).
        assert!(FrameReader::y4m("YUV4MPEG2 W2 H2 \u{e9}x\n".as_bytes(), "s").is_ok());
        let mut cut = b"YUV4MPEG2 W2 H2\nFRAME\n".to_vec();
        cut.extend_from_slice(&[1, 2, 3]);
        let mut reader = FrameReader::y4m(&cut[..], "clip.y4m").unwrap();
        let err = reader.next_frame().unwrap_err();
        assert!(
            err.message.contains("frame 1 is cut short"),
            "{}",
            err.message
        );
        let mut reader = FrameReader::raw_rgba(&[0u8; 10][..], "raw", 2, 1);
        assert!(reader.next_frame().unwrap().is_some());
        let err = reader.next_frame().unwrap_err();
        assert!(
            err.message.contains("frame 2 is cut short"),
            "{}",
            err.message
        );
    }

    #[test]
    fn raw_frames_pass_through_unchanged() {
        let frame = gradient(3, 2);
        let mut bytes = Vec::new();
        let mut writer = FrameWriter::new(&mut bytes, "out", StreamFormat::RawRgba, (1, 1));
        writer.write_frame(&frame).unwrap();
        writer.finish().unwrap();
        let mut reader = FrameReader::raw_rgba(&bytes[..], "in", 3, 2);
        assert_eq!(
            reader.next_frame().unwrap().unwrap().to_rgba8(),
            frame.to_rgba8()
        );
        assert!(reader.next_frame().unwrap().is_none());
    }
}
