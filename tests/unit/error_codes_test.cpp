// Error codes as the language bindings name and classify them.
#include <gtest/gtest.h>

#include "deadbolt/error.hpp"

using deadbolt::errc;
using deadbolt::ErrorKind;

TEST(ErrorCodes, EveryCodeHasItsIdentifierAsItsName) {
    EXPECT_EQ(deadbolt::code_name(errc::invalid_argument), "invalid_argument");
    EXPECT_EQ(deadbolt::code_name(errc::not_acquired), "not_acquired");
    EXPECT_EQ(deadbolt::code_name(errc::not_owner), "not_owner");
    EXPECT_EQ(deadbolt::code_name(errc::no_quorum), "no_quorum");  // the last one
    EXPECT_EQ(deadbolt::code_name(std::make_error_code(std::errc::timed_out)), "");
    EXPECT_EQ(deadbolt::code_name(std::error_code(99, deadbolt::category())), "");
    for (int v = 1; v <= static_cast<int>(errc::no_quorum); ++v)
        EXPECT_FALSE(deadbolt::code_name(std::error_code(v, deadbolt::category())).empty()) << v;
}

TEST(ErrorCodes, EachKindIsTheClassThrowErrorThrows) {
    for (int v = 1; v <= static_cast<int>(errc::no_quorum); ++v) {
        std::error_code ec(v, deadbolt::category());
        try {
            deadbolt::throw_error(ec, "x");
        } catch (const deadbolt::UsageError&) {
            EXPECT_EQ(deadbolt::kind_of(ec), ErrorKind::usage) << v;
        } catch (const deadbolt::ConnectionError&) {
            EXPECT_EQ(deadbolt::kind_of(ec), ErrorKind::connection) << v;
        } catch (const deadbolt::LockError&) {
            EXPECT_EQ(deadbolt::kind_of(ec), ErrorKind::lock) << v;
        } catch (const deadbolt::ServerError&) {
            EXPECT_EQ(deadbolt::kind_of(ec), ErrorKind::server) << v;
        }
    }
    EXPECT_EQ(deadbolt::kind_of(errc::auth_failed), ErrorKind::server);
    EXPECT_EQ(deadbolt::kind_of(errc::unknown_outcome), ErrorKind::connection);
    EXPECT_EQ(deadbolt::kind_of(std::make_error_code(std::errc::timed_out)), ErrorKind::other);
}

TEST(ErrorCodes, ABindingsClassIsTheCodesOwnElseItsKinds) {
    using deadbolt::ErrorClass;
    EXPECT_EQ(deadbolt::class_of(errc::not_acquired), ErrorClass::not_acquired);
    EXPECT_EQ(deadbolt::class_of(errc::not_owner), ErrorClass::lost);
    EXPECT_EQ(deadbolt::class_of(errc::cancelled), ErrorClass::cancelled);
    EXPECT_EQ(deadbolt::class_of(errc::not_replicated), ErrorClass::lock);
    EXPECT_EQ(deadbolt::class_of(errc::invalid_url), ErrorClass::usage);
    EXPECT_EQ(deadbolt::class_of(errc::no_quorum), ErrorClass::connection);
    EXPECT_EQ(deadbolt::class_of(errc::auth_failed), ErrorClass::server);
    EXPECT_EQ(deadbolt::class_of(std::error_code{}), ErrorClass::other);
    EXPECT_EQ(deadbolt::class_of(std::make_error_code(std::errc::timed_out)), ErrorClass::other);
}
