/*-------------------------------------------------------------------------
 *
 * shmem.h
 *		The checkpoint folder's set-up at load time (src/checkpoint/shmem.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_SHMEM_H
#define LANCELSM_SHMEM_H

extern void lsm_checkpoint_init(void);

#endif							/* LANCELSM_SHMEM_H */
