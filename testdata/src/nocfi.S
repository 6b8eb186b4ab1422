/*
 * nocfi.S - nocfi_frame(leaf): calls leaf from a frame that has neither
 * CFI nor a frame pointer (rbp holds 1 meanwhile, so a frame-pointer step
 * must fail), with decoy code addresses in its locals that no CALL
 * precedes, so a stack scan must skip them to find main.
 */
	.text
	.globl	nocfi_frame
	.type	nocfi_frame, @function
nocfi_frame:
	push	%rbp
	mov	$1, %ebp
	sub	$32, %rsp
	lea	nocfi_frame(%rip), %rax
	mov	%rax, 0(%rsp)
	mov	%rdi, 8(%rsp)
	mov	%rax, 16(%rsp)
	mov	%rdi, 24(%rsp)
	call	*%rdi
	add	$32, %rsp
	pop	%rbp
	ret
	.size	nocfi_frame, . - nocfi_frame

	.section .note.GNU-stack, "", @progbits
