// The engines linked into this program, found by URL scheme. Each engine's library registers
// itself as it is loaded (its engine.cpp), so connecting needs no list of engines and adding
// one touches no shared file. Its CMake target makes every link keep that registration: a
// static initialiser alone in an archive member nothing references would be dropped.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace deadbolt {
class Client;
struct ClientOptions;
}  // namespace deadbolt

namespace deadbolt::detail {

struct Engine {
    std::string_view name;                  // as its build option and package name it: "etcd"
    std::vector<std::string_view> schemes;  // the URL schemes it takes, without "://"
    std::string_view url_form;              // how its URLs look, for errors and --help
    Client (*connect)(std::string_view url, const ClientOptions& options) = nullptr;
};

/// Adds an engine to this program's registry; a scheme another engine already took stays
/// with that engine (the same library loaded twice registers twice).
void register_engine(Engine engine) noexcept;

/// The engine that takes this scheme (no "://"), or nothing when none linked in does.
std::optional<Engine> engine_for_scheme(std::string_view scheme);

/// Every engine linked into this program, by name.
std::vector<Engine> linked_engines();

/// Registers an engine when its static object is built (at load or program start).
struct EngineRegistration {
    explicit EngineRegistration(Engine engine) noexcept { register_engine(std::move(engine)); }
};

}  // namespace deadbolt::detail
