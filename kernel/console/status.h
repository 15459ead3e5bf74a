/* status.h - the facts the screen's status line shows (model, speed,
 * memory). Whoever knows a fact sets it; the framebuffer console draws it. */
#ifndef KERNEL_STATUS_H
#define KERNEL_STATUS_H

/* Name of the loaded model ("" for none). Copied. */
void status_set_model(const char *name);
/* Decode speed of the last answer, tokens per second (0: none yet). */
void status_set_speed(double decode_tokens_per_second);
/* Redraws the status line now (also done by the setters). */
void status_refresh(void);

#endif
