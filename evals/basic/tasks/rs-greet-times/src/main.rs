//! greet NAME: prints a greeting.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name] = args.as_slice() else {
        eprintln!("usage: greet NAME");
        std::process::exit(2);
    };
    println!("{}", greet::greeting(name));
}
