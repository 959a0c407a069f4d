// The CLI's face of the engines' loader (src/loader/engine_loader.hpp): the same calls, whose
// failures are the CLI's usage problems. `--version` and a command's `--help` load no engine but
// what --help lists, and a Redis URL loads Redis alone.
#pragma once

#include <string_view>

namespace deadbolt::cli {

/// detail::load_engine_for; throws UsageProblem naming a library that cannot be loaded.
void load_engine_for(std::string_view url);
/// detail::engine_for: the built engine that takes url's scheme, or empty.
std::string_view engine_for(std::string_view url);
/// detail::load_all_engines (for --help's list of URL forms); the same failures.
void load_all_engines();
/// detail::engine_symbol: engine's C symbol name, loading the engine first; nullptr when absent.
void* engine_symbol(std::string_view engine, const char* name);

}  // namespace deadbolt::cli
