#include "engines.hpp"

#include "common.hpp"
#include "deadbolt/error.hpp"
#include "loader/engine_loader.hpp"

namespace deadbolt::cli {

namespace {

// The loader's failures are the CLI's usage problems (exit 64, the message as it is).
template <class F>
auto usage_problem_of(F&& f) {
    try {
        return f();
    } catch (const deadbolt::UsageError& e) {
        throw UsageProblem(e.what());
    }
}

}  // namespace

void load_engine_for(std::string_view url) {
    usage_problem_of([&] { detail::load_engine_for(url); });
}

std::string_view engine_for(std::string_view url) {
    return detail::engine_for(url);
}

void load_all_engines() {
    usage_problem_of([] { detail::load_all_engines(); });
}

void* engine_symbol(std::string_view engine, const char* name) {
    return usage_problem_of([&] { return detail::engine_symbol(engine, name); });
}

}  // namespace deadbolt::cli
