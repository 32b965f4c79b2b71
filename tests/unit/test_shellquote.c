/* Unit tests for init/shellquote.c: safe words stay bare, everything else is single-quoted, a single
 * quote survives, and a first word that a shell would read as an assignment, a keyword or a job
 * is quoted. (tests/contract/test_submit.py runs the result through sh, dash and bash.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shellquote.h"

/* The words are literals here, and shellquote_join reads them only (execve's argv type). */
static void check(const char *const *argv, int argc, const char *want)
{
    char *got = shellquote_join((char *const *)argv, argc);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_words(void **state)
{
    const char *plain[] = {"python", "train.py", "--lr=0.1", "a/b.c:d,e+f@g%"};
    const char *non_ascii[] = {"python", "caf\xc3\xa9.py"};
    const char *odd[] = {"it's", "a b", "$HOME", "`id`", "two\nlines", "", "\\"};
    (void)state;
    check(plain, 4, "python train.py --lr=0.1 a/b.c:d,e+f@g%");
    check(odd, 7, "'it'\\''s' 'a b' '$HOME' '`id`' 'two\nlines' '' '\\'");
    check(plain, 0, "");
    check(non_ascii, 2, "python 'caf\xc3\xa9.py'");
}

/* The first word is what the shell reads as a command, an assignment or a keyword: it stays bare
 * only when it is plainly a name or a path. Later words keep the wider safe set. */
static void test_first_word(void **state)
{
    const char *assignment[] = {"A=B", "python", "x=1"};
    const char *keyword[] = {"if", "then"};
    const char *keywords[][2] = {{"for", "in"},          {"while", "do"}, {"case", "esac"}, {"time", "select"},
                                 {"function", "coproc"}, {"elif", "fi"},  {"until", "done"}};
    const char *keyword_want[] = {"'for' in",          "'while' do", "'case' esac", "'time' select",
                                  "'function' coproc", "'elif' fi",  "'until' done"};
    const char *job_spec[] = {"%1"}; /* harmless: bash takes a first word starting with % for a job anyway */
    const char *path[] = {"/usr/bin/python3.11", "-u", "job_2.py"};
    const char *punctuated[] = {"a:b", "c,d+e@f"};
    const char *not_keyword[] = {"iff", "fi2"};
    (void)state;
    check(assignment, 3, "'A=B' python x=1");
    check(keyword, 2, "'if' then");
    for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
        check(keywords[i], 2, keyword_want[i]);
    check(job_spec, 1, "'%1'");
    check(path, 3, "/usr/bin/python3.11 -u job_2.py");
    check(punctuated, 2, "'a:b' c,d+e@f");
    check(not_keyword, 2, "iff fi2");
}

static void test_bounded(void **state)
{
    char *big = malloc(SHELLQUOTE_MAX_BYTES);
    char *argv[1] = {big};
    (void)state;
    assert_non_null(big);
    memset(big, '\'', SHELLQUOTE_MAX_BYTES - 1);
    big[SHELLQUOTE_MAX_BYTES - 1] = '\0';
    assert_null(shellquote_join(argv, 1));
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_words), cmocka_unit_test(test_first_word),
                                       cmocka_unit_test(test_bounded)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
