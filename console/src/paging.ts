import { useInfiniteQuery } from '@tanstack/react-query';

export interface PageResult<T> {
  items: T[];
  next: string | null;
}

/** A list that pages with `next_cursor`: the loaded items and a "load more" handle. */
export function usePaged<T>(
  key: readonly unknown[],
  fetchPage: (cursor: string | undefined) => Promise<PageResult<T>>,
  refetchInterval?: number,
) {
  const query = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next ?? undefined,
    refetchInterval,
  });
  return {
    items: query.data?.pages.flatMap((page) => page.items) ?? [],
    isPending: query.isPending,
    error: query.error,
    hasNext: query.hasNextPage,
    loadMore: () => void query.fetchNextPage(),
    loadingMore: query.isFetchingNextPage,
  };
}

/** Picks a list response apart: `{"<plural>":[…],"next_cursor":…}` (typed by the generated client). */
export function pageOf<K extends string, T>(
  body: { [P in K]: T[] } & { next_cursor?: string | null },
  plural: K,
): PageResult<T> {
  return { items: body[plural] ?? [], next: body.next_cursor ?? null };
}
