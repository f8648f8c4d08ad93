//! Fuzz target: the YUV4MPEG2 frame-stream reader (`softgpu render --input -` / `.y4m` files):
//! its header, frame headers and frame data, read frame after frame until the stream ends or
//! is refused.

#![no_main]

use libfuzzer_sys::fuzz_target;
use softgpu::video::FrameReader;
use softgpu_fuzz::MAX_IMAGE_INPUT;

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_IMAGE_INPUT {
        return;
    }
    let Ok(mut reader) = FrameReader::y4m(data, "stream.y4m") else {
        return;
    };
    // A frame takes at least one byte of input, so this ends with the data.
    while let Ok(Some(frame)) = reader.next_frame() {
        assert_eq!(
            (frame.width(), frame.height()),
            reader.frame_size(),
            "every frame has the header's size"
        );
    }
});
