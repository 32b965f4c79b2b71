/* Unit tests for lib/shellquote.c: safe words stay bare, everything else is single-quoted, and a
 * single quote survives. (The contract tests check the round trip through a real shell parser.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shellquote.h"

static void check(char *const *argv, int argc, const char *want)
{
    char *got = shellquote_join(argv, argc);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_words(void **state)
{
    char *plain[] = {"python", "train.py", "--lr=0.1", "a/b.c:d,e+f@g%"};
    char *odd[] = {"it's", "a b", "$HOME", "`id`", "two\nlines", "", "\\"};
    (void)state;
    check(plain, 4, "python train.py --lr=0.1 a/b.c:d,e+f@g%");
    check(odd, 7, "'it'\\''s' 'a b' '$HOME' '`id`' 'two\nlines' '' '\\'");
    check(plain, 0, "");
}

static void test_bounded(void **state)
{
    char *big = malloc(SHELLQUOTE_MAX_BYTES);
    char *argv[1] = {big};
    (void)state;
    memset(big, '\'', SHELLQUOTE_MAX_BYTES - 1);
    big[SHELLQUOTE_MAX_BYTES - 1] = '\0';
    assert_null(shellquote_join(argv, 1));
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_words), cmocka_unit_test(test_bounded)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
