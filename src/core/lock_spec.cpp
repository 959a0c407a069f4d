#include "core/lock_spec.hpp"

namespace deadbolt::detail {

const char* primitive_of(Shape s) {
    switch (s) {
        case Shape::exclusive:
            break;
        case Shape::fair:
            return "fair";
        case Shape::write:
            return "write";
        case Shape::read:
            return "read";
        case Shape::reentrant:
            return "reentrant";
        case Shape::permits:
            return "semaphore";
        case Shape::multi:
            return "multi";
        case Shape::leader:
            return "leader";
    }
    return "mutex";
}

std::string multi_display_name(const std::vector<std::string>& names) {
    if (names.size() <= 1) return names.empty() ? std::string() : names.front();
    return names.front() + " (+" + std::to_string(names.size() - 1) + " more)";
}

}  // namespace deadbolt::detail
