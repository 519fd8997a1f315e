//! countlines FILE...: the number of lines of each file, and the total.

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let mut total = 0;
    for path in &paths {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) => {
                eprintln!("countlines: {path}: {err}");
                std::process::exit(1);
            }
        };
        let count = countlines::count_lines(&text);
        total += count;
        println!("{count:>6} {path}");
    }
    println!("{total:>6} total");
}
