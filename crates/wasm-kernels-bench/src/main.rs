//! The suite natively: `cargo run --release -p webproof-wasm-kernels-bench
//! -- [test|bench] [reps] [zk_blocks]`, printing the same JSON as the
//! WebAssembly build.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    match args.get(1).map(String::as_str).unwrap_or("bench") {
        "test" => {
            let r = webproof_wasm_kernels_bench::tests_json();
            println!("{r}");
            if !r.contains("\"ok\":true") {
                std::process::exit(1);
            }
        }
        _ => {
            let start = std::time::Instant::now();
            let now = move || start.elapsed().as_secs_f64() * 1e3;
            println!(
                "{}",
                webproof_wasm_kernels_bench::bench_json(&now, arg(2, 5), arg(3, 64))
            );
        }
    }
}
