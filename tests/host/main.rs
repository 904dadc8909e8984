//! The embedded host through a real `asp-bridge host serve` process, with the scriptable fake
//! provider (`tests/fake_provider`) enrolled by a trusted configuration. Tests are named after the
//! conformance requirement they check (`asp-spec/docs/conformance/requirements.md`).

mod bounds;
mod conformance;
mod decisions;
mod faults;
mod floods;
mod leave_out;
mod lifecycle;
mod opcore;
mod support;
mod wire;
