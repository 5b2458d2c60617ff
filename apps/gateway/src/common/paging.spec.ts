import { pageWindow } from './paging';

describe('pageWindow', () => {
  it('should take limit/offset, with the default size when limit is absent', () => {
    const window = pageWindow({ limit: 10, offset: 30 }, 100);
    expect(window).toMatchObject({ limit: 10, offset: 30 });
    expect(window.pagination(45)).toEqual({ totalRecords: 45, limit: 10, offset: 30 });
    expect(pageWindow({}, 100)).toMatchObject({ limit: 100, offset: 0 });
  });

  it('should let the older page/pageSize win, pages counted from 1, and answer them back', () => {
    const window = pageWindow({ limit: 5, offset: 99, page: 3, pageSize: 20 }, 100);
    expect(window).toMatchObject({ limit: 20, offset: 40 });
    expect(window.pagination(45)).toEqual({ totalRecords: 45, limit: 20, offset: 40, page: 3, pageSize: 20, lastPage: 3 });
    expect(pageWindow({ page: 2 }, 50).pagination(0)).toEqual({ totalRecords: 0, limit: 50, offset: 50, page: 2, pageSize: 50, lastPage: 1 });
    expect(pageWindow({ pageSize: 7 }, 50)).toMatchObject({ limit: 7, offset: 0 });
  });
});
