import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiError } from './api';
import type { FieldErrors } from './ui';

/**
 * A form's submit → mutation → error or success, for every Console form that changes something.
 * `validate` checks the fields in the browser (a message for each wrong field, undefined
 * for a right one); `submit` runs the mutation only when none is wrong. `errorOf(field)`
 * is the message to show by a field: the browser's, else the server's field error.
 * `notice` is the error for the notice above the button (none when a field shows it).
 * The mutation (TanStack Query) holds the rest: `isPending`, `error`, `isSuccess`.
 */
export function useFormMutation<T>(options: {
  mutationFn: () => Promise<T>;
  validate?: () => FieldErrors;
  onSuccess?: (data: T) => void;
}) {
  const [local, setLocal] = useState<FieldErrors>({});
  const mutation = useMutation({ mutationFn: options.mutationFn, onSuccess: options.onSuccess });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const errors = options.validate?.() ?? {};
    setLocal(errors);
    if (!Object.values(errors).some(Boolean)) {
      mutation.mutate();
    }
  };
  const errorOf = (field: string) =>
    local[field] ?? (mutation.error instanceof ApiError ? mutation.error.fieldError(field) : undefined);
  // A problem that belongs to a field is shown by it (errorOf); the notice shows the rest.
  const notice = mutation.error instanceof ApiError && mutation.error.forField ? null : mutation.error;
  return { mutation, submit, errorOf, notice };
}
