/* status.c - the status line's facts; formatting and drawing are the
 * framebuffer console's (fbcon_set_status_line). */
#include "kernel/console/status.h"

#include "kernel/drivers/fbcon.h"
#include "kernel/mm/memory.h"
#include "lib/format.h"
#include "lib/string.h"

static char model_name[64];
static double decode_speed;

void status_set_model(const char *name) {
    strlcpy(model_name, name ? name : "", sizeof model_name);
    status_refresh();
}

void status_set_speed(double decode_tokens_per_second) {
    decode_speed = decode_tokens_per_second;
    status_refresh();
}

void status_refresh(void) {
    struct memory_stats m;
    memory_get_stats(&m);
    char line[160];
    int n = snprintf(line, sizeof line, " model: %s", model_name[0] ? model_name : "none");
    if (decode_speed > 0 && n > 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " | %.1f tok/s", decode_speed);
    if (n > 0 && (size_t)n < sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, " | memory %llu of %llu MiB used",
                 (unsigned long long)(m.used_bytes >> 20), (unsigned long long)(m.total_bytes >> 20));
    fbcon_set_status_line(line);
}
