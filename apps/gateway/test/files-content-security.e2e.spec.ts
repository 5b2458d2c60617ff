import { FileRepository } from '@gw/persistence';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

/**
 * `/files/<id>` serves what a contact sent from the API's own origin: a type that can run (HTML, SVG,
 * JavaScript) is a download, never a page, and every answer forbids sniffing and script.
 */
describe('/files content security (HTTP)', () => {
  let gw: GatewayHarness;
  let instanceId: string;

  beforeAll(async () => {
    gw = await startGateway();
    ({ id: instanceId } = await gw.createInstance('files'));
  }, 60_000);
  afterAll(() => gw.close());

  const serve = async (mimetype: string, fileName: string) => {
    const id = await gw.app.get(FileRepository).store(instanceId, Buffer.from('<script>alert(document.domain)</script>'), mimetype, fileName, 60_000);
    const response = await fetch(`${gw.baseUrl}/files/${id}`);
    await response.arrayBuffer();
    return response;
  };
  const expectLocked = (response: Response) => {
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
  };

  it.each([
    ['text/html', 'page.html'],
    ['image/svg+xml', 'logo.svg'],
    ['application/javascript', 'app.js'],
  ])('should answer %s as an attachment', async (mimetype, fileName) => {
    const response = await serve(mimetype, fileName);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${fileName}"`);
    expectLocked(response);
  });

  it.each([
    ['image/png', 'photo.png'],
    ['application/pdf', 'invoice.pdf'],
  ])('should answer %s inline', async (mimetype, fileName) => {
    const response = await serve(mimetype, fileName);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(mimetype);
    expect(response.headers.get('content-disposition')).toBe(`inline; filename="${fileName}"`);
    expectLocked(response);
  });

  it('should lock the not-found answers too', async () => {
    const response = await fetch(`${gw.baseUrl}/files/${'0'.repeat(32)}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'File not found or expired' });
    expectLocked(response);
  });
});
