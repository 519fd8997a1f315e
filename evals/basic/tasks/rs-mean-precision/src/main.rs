//! mean FILE: the mean of the numbers in FILE (one per line), with 2 decimals.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path] = args.as_slice() else {
        eprintln!("usage: mean FILE");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("mean: {path}: {err}");
            std::process::exit(1);
        }
    };
    let values: Vec<f64> = text
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect();
    match mean::mean(&values) {
        Some(m) => println!("{m:.2}"),
        None => println!("no numbers"),
    }
}
