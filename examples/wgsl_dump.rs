fn main() {
    let path = std::env::args().nth(1).unwrap();
    let stage = if std::env::args().nth(2).as_deref() == Some("vs") {
        softgpu::frontend::wgsl::Stage::Vertex
    } else {
        softgpu::frontend::wgsl::Stage::Fragment
    };
    let src = std::fs::read_to_string(&path).unwrap();
    match softgpu::frontend::wgsl::compile(&src, &path, stage, None) {
        Ok(l) => {
            print!("{}", softgpu::ir::text::print_program(&l.program));
            println!("{:?}", l.resources);
            if let Err(e) = softgpu::ir::validate::validate(&l.program) {
                println!("INVALID {e:?}");
            }
        }
        Err(e) => println!("ERROR {e}"),
    }
}
