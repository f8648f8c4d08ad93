fn main() {
    let path = std::env::args().nth(1).unwrap();
    let units: u64 = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(u64::MAX);
    let shader = softgpu::frontend::slang::compile_slang(std::path::Path::new(&path)).unwrap();
    let (_, fs) = shader.lower().unwrap();
    let mut p = fs.program.clone();
    softgpu::ir::opt::specialize(&mut p, units);
    let before = p.instructions.len();
    println!("{}", p);
    let f = softgpu::ir::texelfn::hoist_texel_functions(&mut p, units);
    if std::env::var_os("AFTER").is_some() {
        println!("{}", p);
    }
    eprintln!(
        "{} -> {} instructions, {} functions",
        before,
        p.instructions.len(),
        f.len()
    );
}
