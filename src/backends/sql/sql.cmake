# deadbolt_sql: what the SQL engines share (a session per holder, claims, the store over a
# SqlDialect), one library linked by deadbolt::postgres and deadbolt::mariadb.
include_guard(GLOBAL)
set(DEADBOLT_SQL_DIR ${CMAKE_CURRENT_LIST_DIR})

function(deadbolt_sql_library)
  if(TARGET deadbolt_sql)
    return()
  endif()
  add_library(deadbolt_sql
    ${DEADBOLT_SQL_DIR}/session.cpp
    ${DEADBOLT_SQL_DIR}/claim.cpp
    ${DEADBOLT_SQL_DIR}/store.cpp
    ${DEADBOLT_SQL_DIR}/cancel_fd.cpp
    ${DEADBOLT_SQL_DIR}/session_watch.cpp)
  deadbolt_library(deadbolt_sql sql)
  target_link_libraries(deadbolt_sql PUBLIC deadbolt_core PRIVATE fmt::fmt)
endfunction()
