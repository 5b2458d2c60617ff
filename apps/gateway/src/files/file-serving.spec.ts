import { fileServing } from './file-serving';

describe('fileServing', () => {
  it.each([
    ['text/html', 'page.html'],
    ['TEXT/HTML; charset=utf-8', 'page.html'],
    ['application/xhtml+xml', 'page.xhtml'],
    ['image/svg+xml', 'logo.svg'],
    ['text/xml', 'a.xml'],
    ['application/xml', 'a.xml'],
    ['text/javascript', 'a.js'],
    ['application/javascript', 'a.js'],
    ['application/ecmascript', 'a.es'],
    ['application/x-shockwave-flash', 'a.swf'],
    ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'a.docx'],
    ['multipart/x-mixed-replace; boundary=x', 'a'],
  ])('should make %s a download', (mimetype, fileName) => {
    expect(fileServing(mimetype, fileName).contentDisposition).toMatch(/^attachment; filename="/);
  });

  it.each(['image/png', 'image/jpeg', 'image/webp', 'audio/ogg; codecs=opus', 'video/mp4', 'application/pdf', 'text/plain', 'application/octet-stream'])(
    'should show %s inline',
    (mimetype) => {
      expect(fileServing(mimetype, 'x').contentDisposition).toBe('inline; filename="x"');
    },
  );

  it('should keep a well-formed type with its parameters', () => {
    expect(fileServing('audio/ogg;codecs=opus', undefined)).toEqual({ contentType: 'audio/ogg; codecs=opus', contentDisposition: 'inline' });
  });

  it.each(['text/html\r\nx-evil: 1', 'not a type', 'text/html; <script>', ''])('should serve the malformed type %j as inert bytes', (mimetype) => {
    expect(fileServing(mimetype, undefined)).toEqual({ contentType: 'application/octet-stream', contentDisposition: 'inline' });
  });

  it('should strip paths, quotes and control characters from the name', () => {
    expect(fileServing('text/html', '../../etc/"evil"\r\n.html').contentDisposition).toBe('attachment; filename="_evil_.html"');
    expect(fileServing('text/html', '...').contentDisposition).toBe('attachment');
  });

  it('should give a non-ASCII name as RFC 8187 UTF-8 with an ASCII fallback', () => {
    expect(fileServing('application/pdf', 'relatório final.pdf').contentDisposition).toBe(
      `inline; filename="relat_rio final.pdf"; filename*=UTF-8''relat%C3%B3rio%20final.pdf`,
    );
    // A lone surrogate would make encodeURIComponent throw.
    expect(fileServing('application/pdf', 'a\ud800.pdf').contentDisposition).toContain(`filename*=UTF-8''a%EF%BF%BD.pdf`);
  });
});
