// rustwork.rs - a Rust workload for tests/cli/rust.sh: a hash map, sorts
// of integers and strings through generic code, a trait method on a
// thread; about a second of CPU.  Builds with Debian 12's rustc 1.63.
use std::collections::HashMap;

#[inline(never)]
fn hash_words(n: u64) -> u64 {
    let mut m: HashMap<u64, u64> = HashMap::new();
    for i in 0..n {
        *m.entry(i % 1000).or_insert(0) += i;
    }
    m.values().sum()
}

#[inline(never)]
fn sort_vec<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    let mut w = v.to_vec();
    w.sort();
    w
}

struct Point {
    x: f64,
    y: f64,
}

trait Norm {
    fn norm(&self) -> f64;
}

impl Norm for Point {
    #[inline(never)]
    fn norm(&self) -> f64 {
        (self.x * self.x + self.y * self.y).sqrt()
    }
}

fn main() {
    // the argument count keeps the compiler from computing it all
    let extra = std::env::args().count() as u64 - 1;
    let mut acc = 0u64;
    let v: Vec<u64> = (0..20000u64).map(|i| (i * 7919) % 10007).collect();
    let s: Vec<String> = (0..2000u64)
        .map(|i| format!("w{}", (i * 31) % 997))
        .collect();
    let t = std::thread::spawn(move || {
        let mut a = 0.0;
        for i in 0..3_000_000u64 {
            a += Point { x: (i + extra) as f64, y: 1.0 }.norm();
        }
        a
    });
    for _ in 0..30 {
        acc += hash_words(20000 + extra);
        acc += sort_vec(&v)[5];
        acc += sort_vec(&s).len() as u64;
    }
    let r = t.join().unwrap();
    println!("{} {}", acc, r);
}
