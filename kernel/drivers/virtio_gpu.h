/* virtio_gpu.h - the framebuffer console on virtio-gpu-pci (a 2D scanout of
 * a framebuffer in RAM), for machines whose firmware left no linear
 * framebuffer. */
#ifndef KERNEL_VIRTIO_GPU_H
#define KERNEL_VIRTIO_GPU_H

/* Looks for a virtio-gpu PCI function (after pci_init), sets up its scanout
 * and starts the framebuffer console on it. 0 when the screen works; -1 when
 * there is no such device or it misbehaved (one log line says how). */
int virtio_gpu_init(void);

#endif
