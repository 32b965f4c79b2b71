/* One line walker for the text files read whole (fsroot.c): the loop each parser used to write. */
#include "lines.h"

#include <string.h>

bool lines_next(const char **cursor, const char **line, const char **end)
{
    const char *nl;
    if (!**cursor)
        return false;
    nl = strchr(*cursor, '\n');
    *line = *cursor;
    *end = nl ? nl : *cursor + strlen(*cursor);
    *cursor = **end ? *end + 1 : *end;
    return true;
}
