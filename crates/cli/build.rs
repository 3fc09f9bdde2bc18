//! Links the `tidegate` binary as a position-dependent executable on Linux (`-no-pie`), as Go
//! links helm and flux: the dynamic loader then has no 125,000 relative relocations to apply
//! and no relocated read-only data to copy at every start, about 1.2 ms of each CLI call
//! (`helm template` of a small chart: 6.7 ms → 5.5 ms). The libraries, the heap and the
//! stack keep their address randomisation; only the executable's own image has a fixed
//! address. See docs/benchmarks.md (Helm chart rendering).

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.contains("-linux-") {
        println!("cargo:rustc-link-arg-bin=tidegate=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
