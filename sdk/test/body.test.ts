import { describe, expect, test } from 'vitest';
import { bodyEncoding, toFormData } from '../src/body.js';

describe('bodyEncoding', () => {
  test('JSON is left to openapi-fetch', () => {
    expect(bodyEncoding('application/json')).toEqual({});
  });

  test('a +json type keeps its own Content-Type', () => {
    expect(bodyEncoding('application/merge-patch+json')).toEqual({
      contentType: 'application/merge-patch+json',
    });
  });

  test('other types are sent as given, with their Content-Type', () => {
    const { bodySerializer, contentType } = bodyEncoding('application/octet-stream');
    const bytes = new Uint8Array([1, 2]);
    expect(contentType).toBe('application/octet-stream');
    expect(bodySerializer?.(bytes as never)).toBe(bytes);
  });

  test('multipart becomes FormData', () => {
    expect(bodyEncoding('multipart/form-data').bodySerializer).toBe(toFormData);
  });
});

describe('toFormData', () => {
  test('parts from an object: files, bytes, lists, objects; null and undefined left out', async () => {
    const form = toFormData({
      file: new File(['hello'], 'hello.txt', { type: 'text/plain' }),
      raw: new Uint8Array([104, 105]),
      tags: ['a', 'b'],
      meta: { x: 1 },
      count: 3,
      gone: null,
      missing: undefined,
    });
    expect([...form.keys()]).toEqual(['file', 'raw', 'tags', 'tags', 'meta', 'count']);
    const file = form.get('file') as File;
    expect([file.name, file.type, await file.text()]).toEqual(['hello.txt', 'text/plain', 'hello']);
    expect(await (form.get('raw') as Blob).text()).toBe('hi');
    expect(form.getAll('tags')).toEqual(['a', 'b']);
    expect(form.get('meta')).toBe('{"x":1}');
    expect(form.get('count')).toBe('3');
  });

  test('FormData passes through', () => {
    const form = new FormData();
    expect(toFormData(form)).toBe(form);
  });
});
