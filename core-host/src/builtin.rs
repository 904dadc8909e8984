//! The built-in providers, one row each: the id, the `asp-bridge provider` subcommand that runs
//! it, its `host.toml` table, its defaults and how `status` and the command line name it. The
//! configuration loader, `status` and the CLI read this table; a new built-in provider (the linter
//! runner) is a new row here, its settings in its table, and its checker behind the subcommand.

/// How the built-in providers are started, with the linter runner's check of a `[[linter]]`'s own
/// keys (which the host does not read: it hands them over as `--linter JSON`).
#[derive(Clone, Copy, Debug)]
pub struct Launcher<'a> {
    /// This executable and `provider`, followed by each one's subcommand; empty, they cannot be
    /// started.
    pub command: &'a [String],
    /// Why an entry's keys (as handed over) make no linter, if they do not.
    pub check_linter: fn(&serde_json::Value) -> Result<(), String>,
}

impl<'a> Launcher<'a> {
    /// Started by `command`; a linter's keys are checked by the runner when it starts.
    pub fn new(command: &'a [String]) -> Launcher<'a> {
        Launcher {
            command,
            check_linter: |_| Ok(()),
        }
    }
}

/// One built-in provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Builtin {
    /// Its provider id.
    pub id: &'static str,
    /// The subcommand that runs it: `asp-bridge provider <subcommand>`.
    pub subcommand: &'static str,
    /// Its table in `host.toml` (`[hygiene]`), which also prefixes the keys named in errors.
    pub table: &'static str,
    /// The call sites whose decisions need it unless its table says otherwise (as
    /// `required-for` names them).
    pub required_for: &'static [&'static str],
    /// How `status` says where it comes from.
    pub origin: &'static str,
    /// Enrolled when the configuration does not say otherwise (hygiene); a linter is enrolled only
    /// by a `[[linter]]` entry.
    pub by_default: bool,
}

/// The built-in hygiene provider (`hygiene-provider`).
pub const HYGIENE: Builtin = Builtin {
    id: "hygiene",
    subcommand: "hygiene",
    table: "hygiene",
    // Trusted by being built in: its errors (conflict markers, private keys) decide the advisory
    // call sites unless the configuration says otherwise.
    required_for: &["interactive", "sweep"],
    origin: "the built-in hygiene provider",
    by_default: true,
};

/// The built-in linter runner (`linter-provider`): one provider per `[[linter]]` entry, its id the
/// entry's, its settings handed over as `--linter JSON`.
pub const LINTERS: Builtin = Builtin {
    id: "linters",
    subcommand: "linters",
    table: "linter",
    // Advisory unless an entry says `required-for`: a linter's findings are notes, never a deny.
    required_for: &[],
    origin: "the built-in linter runner",
    by_default: false,
};

/// Every built-in provider, in the order they are enrolled (before any `[[provider]]`).
pub const BUILTINS: &[Builtin] = &[HYGIENE, LINTERS];

impl Builtin {
    /// The row of the built-in provider `id`.
    pub fn find(id: &str) -> Option<&'static Builtin> {
        BUILTINS.iter().find(|b| b.id == id)
    }

    /// How it is started: `launcher` (this executable and `provider`) and its subcommand. With no
    /// launcher it cannot be started: the command is empty.
    pub fn command(&self, launcher: &[String]) -> Vec<String> {
        if launcher.is_empty() {
            return Vec::new();
        }
        let mut command = launcher.to_vec();
        command.push(self.subcommand.to_owned());
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_built_in_provider_has_its_own_id_subcommand_and_table() {
        for (i, row) in BUILTINS.iter().enumerate() {
            assert_eq!(Builtin::find(row.id), Some(row));
            for other in &BUILTINS[i + 1..] {
                assert_ne!(row.id, other.id);
                assert_ne!(row.subcommand, other.subcommand);
                assert_ne!(row.table, other.table);
            }
        }
        let launcher = ["/bin/asp-bridge".to_owned(), "provider".to_owned()];
        assert_eq!(
            HYGIENE.command(&launcher),
            ["/bin/asp-bridge", "provider", "hygiene"]
        );
        assert!(HYGIENE.command(&[]).is_empty());
        assert_eq!(
            LINTERS.command(&launcher),
            ["/bin/asp-bridge", "provider", "linters"]
        );
    }
}
