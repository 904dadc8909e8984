//! asp-bridge CLI.
fn main() {}
