// Shared pieces of the deadbolt CLI: exit codes, durations, connecting.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "deadbolt/deadbolt.hpp"

namespace deadbolt::cli {

/// Exit codes of the deadbolt tool (a child's own code is passed through by `run`).
enum Exit : int {
    kOk = 0,
    kFree = 1,          ///< status: the lock is free; list: no lock matched
    kMissing = 1,       ///< fenced-get: no such key (an empty value exits 0)
    kUsage = 64,        ///< bad arguments (sysexits EX_USAGE)
    kStaleFence = 65,   ///< fenced-set refused: a higher fence already wrote (EX_DATAERR)
    kServer = 69,       ///< cannot connect, or the server refused (EX_UNAVAILABLE)
    kLeaseLost = 70,    ///< the lease was lost while the child ran; the child was stopped
    kNotObtained = 75,  ///< lock not obtained within --wait / throttled (EX_TEMPFAIL)
    kCannotExec = 126,  ///< the command exists but cannot be executed
    kNotFound = 127,    ///< the command was not found
};

/// Text for --help footers listing the exit codes.
extern const char* const kExitCodesHelp;

/// Thrown for usage problems found after CLI11 parsing (e.g. a bad duration).
struct UsageProblem : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Parses a duration option value or throws UsageProblem naming the option.
std::chrono::milliseconds duration_arg(const std::string& option, const std::string& value);

/// Adds --url (default $DEADBOLT_URL or redis://127.0.0.1:6379) and --password-file to cmd.
void add_url_option(CLI::App& cmd, std::string& url);
/// Writes every engine's URL forms into the --url options' help (loading every engine).
void describe_url_forms();
/// Client::connect(url), with its warnings (an even Redlock node count, a node down) on stderr.
/// The password may come from --password-file or $DEADBOLT_PASSWORD instead of the URL, so it
/// does not show in `ps`.
deadbolt::Client connect(const std::string& url);

/// The closest of candidates to word (for "did you mean"), or empty when none is close.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

/// Maps a deadbolt exception to an exit code, after printing "deadbolt: <what>".
int report(const std::exception& e);

}  // namespace deadbolt::cli
