#include "history.hpp"

#include <time.h>

#include <istream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace deadbolt::torture {
namespace {

constexpr const char* kNames[] = {"acquire_invoke",  "acquire_ok", "acquire_fail",
                                  "acquire_unknown", "write",      "release"};

}  // namespace

std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

std::string to_json(const Event& e) {
    nlohmann::json j{{"e", kNames[static_cast<int>(e.kind)]}, {"w", e.worker}, {"t", e.t}};
    if (e.kind == Event::Kind::acquire_ok ||
        (e.kind == Event::Kind::release && e.valid_until != kForever)) {
        if (e.kind == Event::Kind::acquire_ok) {
            j["fence"] = e.fence;
            j["invoked"] = e.invoked;
        }
        j["valid_until"] = e.valid_until;
    }
    if (e.kind == Event::Kind::write) {
        j["fence"] = e.fence;
        j["accepted"] = e.accepted;
        j["value"] = e.value;
        j["invoked"] = e.invoked;
    }
    return j.dump();
}

std::optional<Event> from_json(const std::string& line, std::string* why) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("e") || !j.contains("w") ||
        !j.contains("t")) {
        if (why) *why = "not an event object";
        return std::nullopt;
    }
    Event e;
    std::string name = j["e"].get<std::string>();
    bool known = false;
    for (int i = 0; i < 6; ++i)
        if (name == kNames[i]) {
            e.kind = static_cast<Event::Kind>(i);
            known = true;
        }
    if (!known) {
        if (why) *why = "unknown event '" + name + "'";
        return std::nullopt;
    }
    e.worker = j["w"].get<int>();
    e.t = j["t"].get<std::int64_t>();
    e.fence = j.value("fence", std::uint64_t{0});
    e.valid_until = j.value("valid_until", kForever);
    e.accepted = j.value("accepted", true);
    e.value = j.value("value", std::int64_t{0});
    e.invoked = j.value("invoked", e.t);
    return e;
}

std::vector<Event> read_history(std::istream& in) {
    std::vector<Event> out;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.empty()) continue;
        std::string why;
        auto e = from_json(line, &why);
        if (!e) throw std::runtime_error("history line " + std::to_string(n) + ": " + why);
        out.push_back(*e);
    }
    return out;
}

}  // namespace deadbolt::torture
