#include "core/engines.hpp"

#include <algorithm>
#include <mutex>

namespace deadbolt::detail {
namespace {

struct Registry {
    std::mutex m;  // a library opened with dlopen() registers from whichever thread opened it
    std::vector<Engine> engines;
};

bool takes(const Engine& e, std::string_view scheme) {
    return std::find(e.schemes.begin(), e.schemes.end(), scheme) != e.schemes.end();
}

// Built at first use: engines register from other libraries' static initialisers, whose order
// against this file's is unspecified.
Registry& registry() {
    static Registry r;
    return r;
}

}  // namespace

void register_engine(Engine engine) noexcept {
    auto& r = registry();
    std::lock_guard lock(r.m);
    try {
        auto taken = [&](std::string_view scheme) {
            return std::any_of(r.engines.begin(), r.engines.end(),
                               [&](const Engine& e) { return takes(e, scheme); });
        };
        std::erase_if(engine.schemes, taken);
        if (engine.schemes.empty()) return;
        auto at =
            std::lower_bound(r.engines.begin(), r.engines.end(), engine.name,
                             [](const Engine& e, std::string_view name) { return e.name < name; });
        r.engines.insert(at, std::move(engine));
    } catch (...) {  // out of memory at load: the engine stays unknown, and says so at connect
    }
}

std::optional<Engine> engine_for_scheme(std::string_view scheme) {
    auto& r = registry();
    std::lock_guard lock(r.m);
    for (const auto& e : r.engines)
        if (takes(e, scheme)) return e;
    return std::nullopt;
}

std::vector<Engine> linked_engines() {
    auto& r = registry();
    std::lock_guard lock(r.m);
    return r.engines;
}

}  // namespace deadbolt::detail
