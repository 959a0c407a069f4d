// The CLI and the bindings load an engine's library by the schemes the engine's CMake file
// declares (src/loader/engine_loader.cpp); they must be the schemes the engine registers, or a URL would load the
// wrong library, or every one.
#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "core/engines.hpp"

namespace {

struct BuiltEngine {
    std::string_view name;
    const char* library;
    std::string_view build_dir;
    std::vector<std::string_view> schemes;
};

const std::vector<BuiltEngine> cli_table{
#include "engine_table.inc"
};

TEST(EngineTable, TheCliLoadsEachEngineByTheSchemesItRegisters) {
    auto linked = deadbolt::detail::linked_engines();
    ASSERT_EQ(linked.size(), cli_table.size());
    for (const auto& engine : linked) {
        auto row = std::find_if(cli_table.begin(), cli_table.end(),
                                [&](const BuiltEngine& b) { return b.name == engine.name; });
        ASSERT_NE(row, cli_table.end()) << engine.name;
        EXPECT_EQ(row->schemes, engine.schemes) << engine.name;
    }
}

}  // namespace
